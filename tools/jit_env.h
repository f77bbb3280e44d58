// tools/jit_env.h — the PURE_JIT* switches (jit-common/jit.h) as every tool reads them: the
// build's backend, if any, and a malformed value reported as "TOOL: message" (a usage error).
// Header only: PURE_HAVE_JIT comes with the backend library the tool links, so this is compiled
// in the tool's own translation unit.
#pragma once
#include <cstdio>
#include <string>

#include "jit-common/jit.h"

namespace pure::tools {

// The name of this build's JIT backend ("llvm", "aarch64"), or null when the build has none.
inline const char* jit_backend_name() {
#ifdef PURE_HAVE_JIT
  return jit::native_backend().name;
#else
  return nullptr;
#endif
}

// Reads PURE_JIT, PURE_JIT_THRESHOLD, PURE_JIT_MIN_SHARE and PURE_JIT_STATS into out. False after
// printing "TOOL: why" to stderr when a value is malformed or asks for a JIT the build lacks.
inline bool read_jit_env(const char* tool, jit::EnvSettings& out) {
  const char* name = jit_backend_name();
  std::string error;
  if (jit::read_env(name != nullptr, name, out, error)) return true;
  std::fprintf(stderr, "%s: %s\n", tool, error.c_str());
  return false;
}

}  // namespace pure::tools
