// jit-llvm/jit.cpp — the LLVM backend as the shared tier sees it (jit-common/jit.h): its name, its
// native-or-step decision and how to make it: by loading the engine, libpure_llvm_engine.so (all of
// LLVM and the engine files), on the compile thread at the first compile. No LLVM here.
#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "jit-llvm/backend.h"
#include "runtime/event_list.h"

namespace pure::jit {

using vm::Op;

// The shared decision as it is: LLVM's lowering has no case of its own.
Lowering lowering_of(Op op) { return shared_lowering(op); }

// What the engine takes from the program, by name, when it is loaded: referenced here so that the
// linker keeps each of them in every program that links this library (exported there by
// --export-dynamic, CMakeLists.txt). A name missing from this list fails the load with dlopen's
// "undefined symbol" message, printed at the first hot loop (and every JIT test then fails).
[[gnu::used]] const void* const engine_imports[] = {
    reinterpret_cast<const void*>(&pure_step),
    reinterpret_cast<const void*>(&pure_jit_seq_get),
    reinterpret_cast<const void*>(&pure_jit_seq_get_field),
    reinterpret_cast<const void*>(&pure_jit_seq_set),
    reinterpret_cast<const void*>(&pure_jit_seq_set_field),
    reinterpret_cast<const void*>(&pure_jit_list_count),
    reinterpret_cast<const void*>(&pure_jit_text_free),
    reinterpret_cast<const void*>(&pure_jit_map_row),
    reinterpret_cast<const void*>(&pure_jit_int_text),
    reinterpret_cast<const void*>(&pure_jit_fmod),
    reinterpret_cast<const void*>(&pure_jit_st_iter),
    reinterpret_cast<const void*>(&pure_jit_iter_refill),
    reinterpret_cast<const void*>(&pure_jit_iter_end),
    reinterpret_cast<const void*>(&pure_jit_iter_next_piece),
    reinterpret_cast<const void*>(&rt::EventList::native_layout),
    reinterpret_cast<const void*>(&vm::iterator_layout),
    reinterpret_cast<const void*>(&vm::kFaulted),
    reinterpret_cast<const void*>(&rows_known),
    reinterpret_cast<const void*>(&iter_row_width),
};

namespace {

// A backend that could not be made: every compile fails with the reason, so the tier rejects each
// hot loop and the interpreter goes on running it (the same bytes, only slower). The reason is
// printed once, when the first loop gets hot.
class Unavailable final : public Backend {
 public:
  explicit Unavailable(std::string why) : why_(std::move(why)) {
    std::fprintf(stderr, "pure-jit: %s; hot loops stay interpreted\n", why_.c_str());
  }
  vm::NativeLoop compile(const vm::Function&, uint32_t, std::string& error, const std::atomic<bool>*) override {
    error = why_;
    return nullptr;
  }

 private:
  std::string why_;
};

// The folder of the running program (/proc/self/exe), or "".
std::string program_folder() {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return "";
  std::string s(path, static_cast<size_t>(n));
  size_t slash = s.rfind('/');
  return slash == std::string::npos ? "" : s.substr(0, slash);
}

constexpr const char* kEngineFile = "libpure_llvm_engine.so";

// PURE_JIT_ENGINE=PATH if set; else the engine beside the program (an installed pure-run), then the
// one this build made (programs run from the build tree, tests in other folders).
std::unique_ptr<Backend> load_engine() {
  std::vector<std::string> candidates;
  const char* named = std::getenv("PURE_JIT_ENGINE");
  if (named && *named) {
    candidates.push_back(named);
  } else {
    std::string folder = program_folder();
    if (!folder.empty()) candidates.push_back(folder + "/" + kEngineFile);
#ifdef PURE_LLVM_ENGINE_BUILD_PATH
    if (candidates.empty() || candidates.back() != PURE_LLVM_ENGINE_BUILD_PATH) candidates.push_back(PURE_LLVM_ENGINE_BUILD_PATH);
#endif
  }
  std::string looked;
  for (const std::string& path : candidates) {
    if (access(path.c_str(), F_OK) != 0) {
      looked += (looked.empty() ? "" : ", ") + path;
      continue;
    }
    // never closed: the native code it makes lives in it until the process ends
    void* engine = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!engine) return std::make_unique<Unavailable>(std::string("cannot load the LLVM engine: ") + dlerror());
    auto abi = reinterpret_cast<uint64_t (*)()>(dlsym(engine, "pure_llvm_engine_abi"));
    auto make = reinterpret_cast<Backend* (*)()>(dlsym(engine, "pure_llvm_engine_make"));
    if (!abi || !make) return std::make_unique<Unavailable>(path + " is not Pure's LLVM engine");
    if (abi() != kLlvmEngineAbi)
      return std::make_unique<Unavailable>(path + " is from another build of Pure (rebuild it with this one)");
    return std::unique_ptr<Backend>(make());
  }
  return std::make_unique<Unavailable>("the LLVM engine " + std::string(kEngineFile) + " is not there (looked for " + looked +
                                       "; PURE_JIT_ENGINE=PATH names it, PURE_JIT=0 runs without the JIT)");
}

}  // namespace

const BackendKind& native_backend() {
  // the runtime's work counts as 4 instructions, none native (BackendKind::call_cost, measured there)
  // A compile's expected processor time in the interpreter's loop instructions (BackendKind's
  // costs, the ski rental of Options::payoff), measured on x86-64 (PURE_JIT=sync
  // PURE_JIT_THRESHOLD=0 PURE_JIT_STATS=1 on collatz, mandelbrot, sieve, spectralnorm; bench/README.md):
  // the engine's loading and set-up 4.2-5.1 ms, a loop about 2 ms + 0.6 ms an instruction (9
  // instructions 4.8-5.5 ms, 15 about 11, 24 about 16.5), and the interpreter about 0.9M loop
  // instructions a millisecond (collatz: 7.65M in some 9 ms). PURE_JIT_COSTS=SETUP,LOOP,INSTRUCTION
  // replaces them (measurements only).
  static const BackendKind kind = [] {
    BackendKind k{"llvm", &lowering_of, &load_engine, 4};
    k.setup_cost = 4'000'000;
    k.loop_cost = 1'800'000;
    k.instruction_cost = 550'000;
    k.nested_entries = true;  // LoopLowering's entry dispatch takes the heads of nested loops
    if (const char* c = std::getenv("PURE_JIT_COSTS"); c && *c) {
      char* end = nullptr;
      uint64_t v[3];
      bool ok = true;
      for (int i = 0; i < 3 && ok; ++i) {
        v[i] = std::strtoull(c, &end, 10);
        ok = end != c && (i < 2 ? *end == ',' : *end == 0);
        c = end + 1;
      }
      if (ok) {
        k.setup_cost = v[0];
        k.loop_cost = v[1];
        k.instruction_cost = v[2];
      } else {
        std::fprintf(stderr, "pure-jit: PURE_JIT_COSTS: expected SETUP,LOOP,INSTRUCTION (whole numbers); ignored\n");
      }
    }
    return k;
  }();
  return kind;
}

}  // namespace pure::jit
