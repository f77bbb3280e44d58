// jit-llvm/llvm_backend.cpp — the ORC engine of the LLVM backend (the library's entry points):
// runs the loop pipeline (kLoopPasses) on the IR function llvm_lowering.h makes of one loop and links it with
// ORC's LLJIT; set-up, idle and the exported make/ABI functions.
#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>

#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/SmallVectorMemoryBuffer.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/xxhash.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "base/assert.h"
#include "base/limits.h"
#include "jit-llvm/backend.h"
#include "jit-llvm/code_cache.h"
#include "jit-llvm/llvm_lowering.h"
#include "runtime/event_list.h"
#include "vm/engine.h"

namespace pure::jit {

namespace {
using namespace llvm;
using llvm::Module;  // not pure::Module
using llvm::Type;    // not pure::Type
using llvm_ir::LoopLowering;

// The optimiser: a short function pipeline in place of O2's module pipeline. A loop's module is
// one function that calls only runtime functions, so O2's inliner, its interprocedural passes and
// its function simplification run inside the call graph's walk did nothing for the code and cost
// most of the optimiser's time; its vectorisers and unrollers found nothing to do in loops that
// leave at every overflow and spend a step per pass. What the lowered code needs: SROA (the slots'
// allocas become SSA values), early CSE and instcombine (the same loads and checks made once,
// constants folded), CFG simplification (the exits merged), loop rotation and LICM (what the loop
// does not change hoisted out of it), induction variables simplified (an overflow check of
// `j += 1` under `j < n` dropped), GVN, whose load PRE carries the step meter from one pass's
// store to the next pass's check in a register, value-range propagation and constraint
// elimination (more of the overflow checks that the loop's conditions decide), and instcombine and
// CFG simplification again. Without induction variables, value ranges and constraint elimination
// the native code ran 6% more instructions than O2's on spectralnorm; with them as many. Figures: bench/README.md, "A cheaper optimiser".
// instcombine runs one round each time, as O2's does: `<no-verify-fixpoint>`, because a textual
// `instcombine` checks that one round reached a fixpoint and aborts the process (LLVM ERROR) on a
// function where it did not (jit.fuzz found one).
constexpr const char kLoopPasses[] =
    "function(sroa,early-cse<memssa>,instcombine<no-verify-fixpoint>,simplifycfg,loop-mssa(loop-rotate,licm),loop(indvars),gvn,"
    "correlated-propagation,constraint-elimination,instcombine<no-verify-fixpoint>,simplifycfg)";

// The code generator of every compile: one legacy pass pipeline (addPassesToEmitMC) on the
// backend's one TargetMachine, built at the first compile and run again on each module, in place
// of ORC's SimpleCompiler, which builds the pipeline again per module. Each run starts afresh:
// the pipeline's machine-module pass resets its MCContext at the end of a run and the printer its
// object streamer, so nothing of one module is left in the next (tests/jit: loops compiled one
// after another by one backend). The object file is written into `object` and copied out.
class ReusedCompiler final : public orc::IRCompileLayer::IRCompiler {
 public:
  explicit ReusedCompiler(TargetMachine& machine)
      : IRCompiler(orc::irManglingOptionsFromTargetOptions(machine.Options)), machine_(machine), out_(object_) {}
  Expected<std::unique_ptr<MemoryBuffer>> operator()(Module& module) override {
    if (!built_) {
      MCContext* context = nullptr;
      if (machine_.addPassesToEmitMC(passes_, context, out_))
        return make_error<StringError>("the target cannot emit machine code", inconvertibleErrorCode());
      built_ = true;
    }
    object_.clear();
    passes_.run(module);
    auto buffer = MemoryBuffer::getMemBufferCopy(StringRef(object_.data(), object_.size()),
                                                 module.getModuleIdentifier() + "-jitted-objectbuffer");
    object_.clear();
    return buffer;
  }

 private:
  TargetMachine& machine_;
  legacy::PassManager passes_;
  SmallVector<char, 0> object_;
  raw_svector_ostream out_;
  bool built_ = false;
};
}  // namespace

struct LlvmBackend::State {
  std::mutex lock;
  std::unique_ptr<orc::LLJIT> jit;
  ReusedCompiler* compiler = nullptr;  // the code generator, owned by jit's compile layer
  // The persistent code cache (PURE_JIT_CACHE) and what its keys start with: everything but the
  // loop's IR that determines its code (cache_key).
  llvm_cache::CodeCache cache{""};
  std::string key_prefix;
  CacheUse last_use;
  // the optimiser's cost model and the code generator (ReusedCompiler): one subtarget for both
  std::unique_ptr<TargetMachine> machine;
  // The optimiser's builder and analysis managers, made at the first compile and kept: a compile
  // builds the pipeline, runs it and then clears the managers' results (a module of its own each).
  struct Optimiser {
    LoopAnalysisManager lam;
    FunctionAnalysisManager fam;
    CGSCCAnalysisManager cgam;
    ModuleAnalysisManager mam;
    PassInstrumentationCallbacks callbacks;
    std::unique_ptr<PassBuilder> pb;
    const std::atomic<bool>* cancel = nullptr;  // the running compile's
    uint64_t passes_run = 0;                     // in the running compile
  };
  std::unique_ptr<Optimiser> optimiser;
  std::string setup_error;
  uint64_t next_id = 0;
  void* kept_next = nullptr;  // see ~LlvmBackend
  // the engine's read-only segments (its code, read-only data, symbols and unwind tables), page
  // aligned: what idle() gives back
  std::vector<std::pair<uintptr_t, uintptr_t>> read_only;
};

// The engine is a shared object loaded at the first compile, so its static objects (LLVM's command
// line options and registries among them) are made after, and destroyed at exit before, any
// tier made earlier: a Jit that is itself a static object (tests/jit's) outlives them. Such a
// late backend keeps its LLVM state instead of tearing it down among destroyed statics, on a
// chain of plain pointers (no destructor; reachable, so no leak report) the process's end frees.
namespace {
std::atomic<bool> engine_statics_alive{false};
struct EngineStatics {
  EngineStatics() { engine_statics_alive.store(true); }
  ~EngineStatics() { engine_statics_alive.store(false); }
} engine_statics;
void* kept_at_exit = nullptr;  // the last State kept, its kept_next the one before
}  // namespace

namespace {
// The page-aligned ranges of the read-only loadable segments (code, and the read-only data before
// it) of the object this function is in: the engine. The writable segment, and the part of it made
// read-only after relocation (RELRO), hold relocated data: never in these ranges.
int find_engine_segments(dl_phdr_info* info, size_t, void* data) {
  auto* ranges = static_cast<std::vector<std::pair<uintptr_t, uintptr_t>>*>(data);
  const auto here = reinterpret_cast<uintptr_t>(&find_engine_segments);
  bool ours = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + ph.p_vaddr, end = start + ph.p_memsz;
    ours |= ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && here >= start && here < end;
  }
  if (!ours) return 0;
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_W)) continue;
    uintptr_t start = info->dlpi_addr + ph.p_vaddr, end = start + ph.p_filesz;
    start = (start + page - 1) & ~(page - 1);  // whole pages inside the segment
    end &= ~(page - 1);
    if (end > start) ranges->push_back({start, end});
  }
  return 1;
}
}  // namespace

static std::string take_message(Error e) {
  std::string s;
  raw_string_ostream os(s);
  os << e;
  return os.str();
}

namespace {
double thread_cpu_ms() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// This engine's file as the identity of the code it makes from a given IR: its size, time and
// inode (dladdr: the object this function is in). A rebuilt engine, whose optimiser or code
// generator may have changed, misses every entry of the one before (and rewrites them) rather than
// trust code from another build.
std::string engine_identity() {
  Dl_info info;
  struct stat st;
  if (dladdr(reinterpret_cast<void*>(&thread_cpu_ms), &info) == 0 || !info.dli_fname || stat(info.dli_fname, &st) != 0)
    return "unknown engine";
  return std::string(info.dli_fname) + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec) + " " + std::to_string(st.st_ino);
}

// Everything but the loop's IR that determines its code: the cache's format, the engine's ABI
// (the layouts native code reads) and file, LLVM's version, the target (triple, CPU, features,
// data layout) and the options of the pipeline (kLoopPasses, no FP fusion, the code generator's level).
std::string cache_key_prefix(const orc::JITTargetMachineBuilder& jtmb, const std::string& layout) {
  std::string prefix = "pure code cache 1\nabi " + std::to_string(kLlvmEngineAbi) + "\nengine " + engine_identity() +
                       "\nllvm " LLVM_VERSION_STRING "\ntriple " + jtmb.getTargetTriple().str() + "\ncpu " + jtmb.getCPU() +
                       "\nfeatures " + jtmb.getFeatures().getString() + "\nlayout " + layout +
                       "\noptions " + std::string(kLoopPasses) + " fp-fusion-strict codegen-default\n";
  return prefix;
}

// The key of a loop: key_prefix and the module's bitcode (all of the IR, names and metadata
// included). Printing the IR as text instead was most of a hit's time: callgrind, spectralnorm 100
// with its 4 compiles all hits, 31.2M instructions of print in 40.8M of compile; bitcode 7.4M in 16.7M.
llvm_cache::Key cache_key(const std::string& prefix, const Module& module) {
  SmallVector<char, 0> bytes(prefix.begin(), prefix.end());
  raw_svector_ostream os(bytes);
  WriteBitcodeToFile(module, os);
  const XXH128_hash_t h = xxh3_128bits(ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  return {h.high64, h.low64};
}
}  // namespace

LlvmBackend::LlvmBackend() : state_(std::make_unique<State>()) {
  dl_iterate_phdr(&find_engine_segments, &state_->read_only);  // fixed while the engine is loaded
  static std::once_flag once;
  std::call_once(once, [] {
    InitializeNativeTarget();
    InitializeNativeTargetAsmPrinter();
  });
  auto jtmb = orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) {
    state_->setup_error = take_message(jtmb.takeError());
    return;
  }
  jtmb->getOptions().AllowFPOpFusion = FPOpFusion::Strict;  // never fuse a*b+c: the interpreter's bytes
  jtmb->setCodeGenOptLevel(CodeGenOptLevel::Default);
  auto machine = jtmb->createTargetMachine();
  if (!machine) {
    state_->setup_error = take_message(machine.takeError());
    return;
  }
  state_->machine = std::move(*machine);
  TargetMachine* tm = state_->machine.get();
  State* state = state_.get();
  auto jit = orc::LLJITBuilder()
                 .setJITTargetMachineBuilder(*jtmb)
                 .setCompileFunctionCreator([tm, state](orc::JITTargetMachineBuilder)
                                                -> Expected<std::unique_ptr<orc::IRCompileLayer::IRCompiler>> {
                   auto compiler = std::make_unique<ReusedCompiler>(*tm);
                   state->compiler = compiler.get();
                   return compiler;
                 })
                 .setPlatformSetUp(orc::setUpInactivePlatform)  // no static initializers to run
                 .setLinkProcessSymbolsByDefault(false)         // native code calls only what is defined below
                 .create();
  if (!jit) {
    state_->setup_error = take_message(jit.takeError());
    return;
  }
  state_->jit = std::move(*jit);
  // the closed set of functions native code calls
  orc::SymbolMap symbols;
  auto flags = JITSymbolFlags::Exported | JITSymbolFlags::Callable;
  symbols[state_->jit->mangleAndIntern("pure_step")] = {orc::ExecutorAddr::fromPtr(&pure_step), flags};
  symbols[state_->jit->mangleAndIntern(llvm_ir::kFaultedSymbol)] = {orc::ExecutorAddr::fromPtr(&vm::kFaulted[0]),
                                                                    JITSymbolFlags::Exported};
#define PURE_RUNTIME_CALL(name, result, parameters, memory) \
  symbols[state_->jit->mangleAndIntern("pure_jit_" #name)] = {orc::ExecutorAddr::fromPtr(&pure_jit_##name), flags};
#include "jit-common/runtime_calls.def"
#undef PURE_RUNTIME_CALL
  if (Error e = state_->jit->getMainJITDylib().define(orc::absoluteSymbols(std::move(symbols)))) {
    state_->setup_error = take_message(std::move(e));
    state_->jit.reset();
    return;
  }
  const char* cache = std::getenv("PURE_JIT_CACHE");
  if (cache && *cache && std::string(cache) != "0" && std::string(cache) != "off") {
    state_->cache = llvm_cache::CodeCache(cache);
    state_->key_prefix = cache_key_prefix(*jtmb, state_->jit->getDataLayout().getStringRepresentation());
  }
}

void LlvmBackend::idle() {
  // Read-only, file-backed and private: dropping the pages loses nothing (no text relocations in
  // a position-independent object: the loader writes only the writable segment), and this
  // thread, the only one that runs LLVM, is here. The next compile faults what it uses back in
  // from the page cache.
  for (const auto& [first, end] : state_->read_only)
    madvise(reinterpret_cast<void*>(first), end - first, MADV_DONTNEED);
}

LlvmBackend::~LlvmBackend() {
  if (engine_statics_alive.load()) return;  // state_ goes with the usual teardown
  State* kept = state_.release();
  kept->kept_next = kept_at_exit;
  kept_at_exit = kept;
}

// Loads `object` (the code of a loop, as compiled or from the code cache) into a JITDylib of its
// own, which defines kCodeSymbol as the function's first instruction (the object holds its pcs
// relative to it) and links to the main one (pure_step, the runtime calls, kFaultedSymbol), and
// returns the loop's entry. A damaged object fails here with an error, the JITDylib removed.
static vm::NativeLoop load_object(orc::LLJIT& jit, uint64_t id, const vm::Function& function,
                                  std::unique_ptr<MemoryBuffer> object, std::string& error) {
  auto dylib = jit.createJITDylib("pure_loop_" + std::to_string(id));
  if (!dylib) {
    error = take_message(dylib.takeError());
    return nullptr;
  }
  dylib->addToLinkOrder(jit.getMainJITDylib());
  orc::SymbolMap code;
  code[jit.mangleAndIntern(llvm_ir::kCodeSymbol)] = {orc::ExecutorAddr::fromPtr(function.code.data()), JITSymbolFlags::Exported};
  Error e = dylib->define(orc::absoluteSymbols(std::move(code)));
  if (!e) e = jit.addObjectFile(*dylib, std::move(object));
  if (!e) {
    auto symbol = jit.lookup(*dylib, "pure_loop");
    if (symbol) return symbol->toPtr<vm::NativeLoop>();
    e = symbol.takeError();
  }
  error = take_message(std::move(e));
  if (Error removed = jit.getExecutionSession().removeJITDylib(*dylib)) consumeError(std::move(removed));
  return nullptr;
}

Backend::CacheUse LlvmBackend::last_cache_use() const { return state_->last_use; }

vm::NativeLoop LlvmBackend::compile(const vm::Function& function, uint32_t loop, std::string& error,
                                const std::atomic<bool>* cancel) {
  std::lock_guard<std::mutex> guard(state_->lock);
  const double start = thread_cpu_ms();
  state_->last_use = {};
  auto cancelled = [&] {
    if (!cancel || !cancel->load(std::memory_order_relaxed)) return false;
    error = "cancelled";
    return true;
  };
  if (!state_->jit) {
    error = "LLVM setup failed: " + state_->setup_error;
    return nullptr;
  }
  orc::LLJIT& jit = *state_->jit;
  auto ctx = std::make_unique<LLVMContext>();
  auto module = std::make_unique<Module>("pure_loop", *ctx);
  module->setDataLayout(jit.getDataLayout());
  module->setTargetTriple(jit.getTargetTriple().str());
  // one name for every loop (each in a JITDylib of its own): the IR, and so the cache's key, names
  // nothing of this process
  LoopLowering lowering(*ctx, *module, function, loop, "pure_loop");
  lowering.build();
  if (cancelled()) return nullptr;
  // the optimiser and code generator take time superlinear in the function's size: a loop whose
  // IR is over the budget is refused here, before them (base/limits.h)
  const uint64_t size = module->getInstructionCount();
  if (size > limits::kJitLoopIr) {
    error = std::string(kTooLarge) + std::to_string(size) + " LLVM instructions, over the budget of " +
            std::to_string(limits::kJitLoopIr) + " (base/limits.h kJitLoopIr)";
    return nullptr;
  }
  std::string problems;
  raw_string_ostream os(problems);
  if (verifyModule(*module, &os)) {
    error = "invalid IR for " + function.name + " loop " + std::to_string(loop) + ": " + os.str();
    return nullptr;
  }
  // The code cache: the IR as lowered, before any optimisation, holds all the loop's code depends
  // on of the program (its instructions, constants, slots, layouts, pcs relative to kCodeSymbol),
  // and key_prefix the rest.
  llvm_cache::Key key;
  if (state_->cache.enabled()) {
    key = cache_key(state_->key_prefix, *module);
    std::string object;
    double made_ms = 0;
    if (state_->cache.load(key, object, made_ms)) {
      std::string load_error;
      vm::NativeLoop entry = load_object(jit, state_->next_id++, function,
                                         MemoryBuffer::getMemBufferCopy(object, "pure_loop-cached"), load_error);
      if (entry) {
        state_->last_use = {CacheUse::hit, made_ms};
        return entry;
      }
      // an entry whose checksum held but that does not link (never seen): compiled and written again
    }
    state_->last_use = {CacheUse::miss, 0};
  }
  double opt_ms = 0;
  {
    if (!state_->optimiser) {
      auto o = std::make_unique<State::Optimiser>();
      State::Optimiser* raw = o.get();
      // a cancelled compile skips the passes left (its result is thrown away)
      o->callbacks.registerShouldRunOptionalPassCallback([raw](StringRef, Any) {
        return !raw->cancel || !raw->cancel->load(std::memory_order_relaxed);
      });
      // passes_run counts every pass that runs (PURE_JIT_DEBUG; tests/jit bound it per loop)
      o->callbacks.registerBeforeNonSkippedPassCallback([raw](StringRef, Any) { ++raw->passes_run; });
      o->pb = std::make_unique<PassBuilder>(state_->machine.get(), PipelineTuningOptions(), std::nullopt, &o->callbacks);
      o->pb->registerModuleAnalyses(o->mam);
      o->pb->registerCGSCCAnalyses(o->cgam);
      o->pb->registerFunctionAnalyses(o->fam);
      o->pb->registerLoopAnalyses(o->lam);
      o->pb->crossRegisterProxies(o->lam, o->fam, o->cgam, o->mam);
      state_->optimiser = std::move(o);
    }
    State::Optimiser& o = *state_->optimiser;
    o.cancel = cancel;
    // a pass manager per compile (cheap next to its run)
    ModulePassManager mpm;
    if (Error e = o.pb->parsePassPipeline(mpm, kLoopPasses)) {
      error = "the loop pipeline: " + take_message(std::move(e));
      return nullptr;
    }
    o.passes_run = 0;
    const double opt_start = thread_cpu_ms();
    mpm.run(*module, o.mam);
    opt_ms = thread_cpu_ms() - opt_start;
    // nothing cached outlives its module
    o.lam.clear();
    o.fam.clear();
    o.cgam.clear();
    o.mam.clear();
    o.cancel = nullptr;
  }
  if (cancelled()) return nullptr;
  if (getenv("PURE_JIT_DUMP")) module->print(errs(), nullptr);
  if (!state_->compiler) {
    error = "LLVM setup failed: no code generator";
    return nullptr;
  }
  const double cg_start = thread_cpu_ms();
  const uint64_t optimised = module->getInstructionCount();
  auto object = (*state_->compiler)(*module);
  if (getenv("PURE_JIT_DEBUG"))
    std::fprintf(stderr, "pure-jit: %s loop %u: %llu LLVM instructions as lowered, %llu optimised; optimiser %.1f ms (%llu passes), code generator %.1f ms\n",
                 function.name.c_str(), loop, static_cast<unsigned long long>(size), static_cast<unsigned long long>(optimised),
                 opt_ms, static_cast<unsigned long long>(state_->optimiser->passes_run), thread_cpu_ms() - cg_start);
  if (!object) {
    error = take_message(object.takeError());
    return nullptr;
  }
  if (cancelled()) return nullptr;
  std::string kept;
  if (state_->cache.enabled()) kept = (*object)->getBuffer().str();
  vm::NativeLoop entry = load_object(jit, state_->next_id++, function, std::move(*object), error);
  // only code that linked is kept
  if (entry && state_->cache.enabled()) state_->cache.store(key, kept, thread_cpu_ms() - start);
  return entry;
}

}  // namespace pure::jit

// The engine's two entry points (jit-llvm/engine.h): the only symbols the shared object exports
// besides this file's own (LLVM's are hidden by --exclude-libs). Everything else it uses (pure_step,
// the runtime calls, lowering_of, kFaulted) it takes from the program that loads it.
extern "C" PURE_LLVM_ENGINE_EXPORT uint64_t pure_llvm_engine_abi() { return pure::jit::kLlvmEngineAbi; }
extern "C" PURE_LLVM_ENGINE_EXPORT pure::jit::Backend* pure_llvm_engine_make() { return new pure::jit::LlvmBackend(); }
