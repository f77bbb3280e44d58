// jit-llvm/jit.cpp — the LLVM backend as the shared tier sees it (jit-common/jit.h): its name,
// its native-or-step decision and how to make it. No LLVM here.
#include "jit-llvm/backend.h"

namespace pure::jit {

const BackendKind& native_backend() {
  // the runtime's work counts as 4 instructions, none native (BackendKind::call_cost, measured there)
  static const BackendKind kind{"llvm", &lowering_of, [] { return std::unique_ptr<Backend>(std::make_unique<LlvmBackend>()); }, 4};
  return kind;
}

}  // namespace pure::jit
