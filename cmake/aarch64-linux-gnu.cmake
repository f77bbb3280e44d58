# CMake toolchain file: cross-builds Pure for aarch64-linux-gnu on x86-64 Debian 12 and runs it under qemu-user.
# Must not depend on the project's own CMake code; scripts/setup-aarch64.sh prepares everything it names.
#
#   cmake -S . -B build-aarch64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
#         -DPURE_AARCH64_SYSROOT=$PWD/build-aarch64/sysroot
#
# The sysroot folder holds only the unpacked arm64 libasmjit-dev. It is a search root, not CMAKE_SYSROOT:
# the cross g++ brings its own libc in /usr/aarch64-linux-gnu, and setting CMAKE_SYSROOT would hide it.

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# try_compile() projects re-read this file without the cache; pass the sysroot on to them.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES PURE_AARCH64_SYSROOT)
if(NOT PURE_AARCH64_SYSROOT)
  set(PURE_AARCH64_SYSROOT "${CMAKE_BINARY_DIR}/sysroot")
endif()
if(NOT EXISTS "${PURE_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu/libasmjit.a")
  message(FATAL_ERROR
    "No arm64 asmjit in PURE_AARCH64_SYSROOT='${PURE_AARCH64_SYSROOT}'. "
    "Run scripts/setup-aarch64.sh <build dir> and pass -DPURE_AARCH64_SYSROOT=<build dir>/sysroot.")
endif()
set(PURE_AARCH64_SYSROOT "${PURE_AARCH64_SYSROOT}" CACHE PATH "Folder holding the unpacked arm64 .debs")

# Libraries, headers and package configs come only from the sysroot: this keeps the amd64
# /usr/lib/x86_64-linux-gnu/cmake/asmjit (and any other amd64 library) out of the AArch64 link.
set(CMAKE_FIND_ROOT_PATH "${PURE_AARCH64_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Header-only dependencies are architecture-independent, so the native packages serve both builds.
# /usr/include is an implicit include dir of Debian's cross g++ (searched after its own libc headers),
# so their headers are found as they are; only their CMake configs need pointing at.
# Setting <Package>_DIR makes find_package() read that config directly, outside the find root.
foreach(package_and_dir IN ITEMS "doctest|/usr/lib/cmake/doctest" "CLI11|/usr/share/cmake/CLI11")
  string(REPLACE "|" ";" package_and_dir "${package_and_dir}")
  list(GET package_and_dir 0 package)
  list(GET package_and_dir 1 config_dir)
  if(NOT DEFINED ${package}_DIR AND EXISTS "${config_dir}")
    set(${package}_DIR "${config_dir}" CACHE PATH "Native config of header-only ${package}")
  endif()
endforeach()

# Test programs run under user-mode qemu; binfmt_misc is not assumed, so the emulator is always explicit.
find_program(PURE_QEMU_AARCH64 qemu-aarch64 NO_CMAKE_FIND_ROOT_PATH)
if(NOT PURE_QEMU_AARCH64)
  message(FATAL_ERROR "qemu-aarch64 not found; run scripts/setup-aarch64.sh (package qemu-user)")
endif()
set(CMAKE_CROSSCOMPILING_EMULATOR "${PURE_QEMU_AARCH64};-L;/usr/aarch64-linux-gnu")
