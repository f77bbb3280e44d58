// jit-aarch64/a64_backend.cpp — the AArch64 backend of the shared tier (jit-common/jit.h): emits a
// loop with a64_lower.cpp into an asmjit CodeHolder and places it in executable memory with
// asmjit's JitRuntime (which flushes the instruction cache). Built only when targeting AArch64.
#include <asmjit/core.h>

#include <cstdio>
#include <cstdlib>

#include "jit-aarch64/a64_lower.h"

namespace pure::jit::a64 {
namespace {

class A64Backend final : public Backend {
 public:
  vm::NativeLoop compile(const vm::Function& function, uint32_t loop, std::string& error,
                         const std::atomic<bool>* cancel) override {
    if (cancel && cancel->load(std::memory_order_relaxed)) {
      error = "cancelled";
      return nullptr;
    }
    asmjit::CodeHolder code;
    code.init(runtime_.environment());
    asmjit::StringLogger log;
    if (debug_) code.setLogger(&log);
    LoopCodeInfo info;
    if (!emit_loop(code, function, loop, calls_, error, &info)) return nullptr;
    if (cancel && cancel->load(std::memory_order_relaxed)) {
      error = "cancelled";
      return nullptr;
    }
    vm::NativeLoop entry = nullptr;
    if (asmjit::Error e = runtime_.add(&entry, &code)) {
      error = std::string("asmjit: ") + asmjit::DebugUtils::errorAsString(e);
      return nullptr;
    }
    if (debug_)
      std::fprintf(stderr, "pure-jit: %s loop %u: %u int and %u num slots in registers, %u in the frame\n%s",
                   function.name.c_str(), loop, info.gp_pinned, info.fp_pinned, info.memory_slots, log.data());
    return entry;
  }

 private:
  asmjit::JitRuntime runtime_;  // owns the code: lives as long as the tier
  CallTargets calls_ = runtime_call_targets();
  bool debug_ = std::getenv("PURE_JIT_DUMP") != nullptr;
};

}  // namespace
}  // namespace pure::jit::a64

namespace pure::jit {

const BackendKind& native_backend() {
  static const BackendKind kind = [] {
    BackendKind k{"aarch64", &a64::lowering_of,
                  [] { return std::unique_ptr<Backend>(std::make_unique<a64::A64Backend>()); }};
    k.nested_entries = true;  // the entry dispatch takes the heads of nested loops (Lowerer::dispatch)
    return k;
  }();
  return kind;
}

}  // namespace pure::jit
