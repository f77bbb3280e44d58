// tests/jit/fake_engine.cpp — stand-ins for the LLVM engine (jit-llvm/backend.h) that the loader must
// refuse: built twice, as an engine of another build (FAKE_ENGINE_WRONG_ABI: the entry points, a
// different pure_llvm_engine_abi) and as a shared object that is no engine at all (no entry points).
#include <cstdint>

#ifdef FAKE_ENGINE_WRONG_ABI
extern "C" __attribute__((visibility("default"))) uint64_t pure_llvm_engine_abi() { return 0x5a5a; }
extern "C" __attribute__((visibility("default"))) void* pure_llvm_engine_make() { return nullptr; }
#else
extern "C" __attribute__((visibility("default"))) int pure_fake_engine_nothing() { return 0; }
#endif
