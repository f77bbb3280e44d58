// tests/a64/test_a64_encoding.cpp — the AArch64 JIT's lowering (jit-aarch64/a64_lower.cpp and the
// files it shares the Lowerer with) checked word by word against GNU as (aarch64-linux-gnu-as +
// objdump gave the expected words). Runs on any host: asmjit's a64 assembler only writes words into
// a CodeHolder, and nothing here executes them.
// The loops are hand-made bytecode, so the register assignment is known: slots by weight (uses,
// more in inner loops), int-like ones to x22.., num ones to d8..; x21 holds the step budget.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "tests/support/compile_module.h"

#include <asmjit/core.h>

#include <string>
#include <vector>

#include "frontend/frontend.h"
#include "ir/ir.h"
#include "jit-aarch64/a64_lower.h"
#include "runtime/event_list.h"
#include "runtime/store.h"
#include "vm/vm.h"

namespace {

using pure::vm::Instr;
using pure::vm::Op;

// A function whose instructions 0..n-2 are loop 0 (one block, the LOOP at pc 0 heads it) and whose
// last instruction (RET) is outside it.
std::unique_ptr<pure::vm::Function> one_loop(std::vector<Instr> body) {
  auto f = std::make_unique<pure::vm::Function>();
  f->name = "t";
  f->frame_slots = 16;
  f->stack_need = 16;
  f->code = std::move(body);
  f->code.push_back(Instr{Op::RET, 0, 0, 0, 0});
  f->locs.resize(f->code.size());
  uint32_t end = static_cast<uint32_t>(f->code.size() - 1);
  f->blocks.push_back(pure::vm::BlockInfo{0, end, true, true, 0, {0, 1}});
  f->blocks.push_back(pure::vm::BlockInfo{end, end + 1, false, false, -1, {}});
  f->loops = std::vector<pure::vm::LoopInfo>(1);
  f->loops[0].header = 0;
  f->loops[0].blocks = {0};
  f->loops[0].latches = {0};
  f->loops[0].exits = {1};
  return f;
}

struct Emitted {
  std::vector<uint32_t> words;
  pure::jit::a64::LoopCodeInfo info;
  std::string text;  // asmjit's listing, for failure messages
};

Emitted emit(const pure::vm::Function& f, uint32_t loop = 0, bool walks = false, bool pieces = false) {
  asmjit::CodeHolder code;
  REQUIRE(code.init(asmjit::Environment(asmjit::Arch::kAArch64)) == asmjit::kErrorOk);
  asmjit::StringLogger log;
  code.setLogger(&log);
  pure::jit::a64::CallTargets calls;  // stand-in addresses: nothing runs
  calls.step = 0x1000;
  calls.fmod = 0x2000;
  calls.seq_get_field = 0x3000;
  calls.seq_set_field = 0x4000;
  calls.list_count = 0x5000;
  calls.st_iter = 0x6000;
  calls.iter_refill = 0x7000;
  calls.iter_end = 0x8000;
  if (pieces) calls.iter_next_piece = 0xB000;
  if (walks) {
    calls.st_iter_rows = 0x9000;
    calls.walk_materialize = 0xA000;
  }
  Emitted out;
  std::string error;
  bool ok = pure::jit::a64::emit_loop(code, f, loop, calls, error, &out.info);
  CHECK(error == "");
  REQUIRE(ok);
  asmjit::CodeBuffer& buffer = code.textSection()->buffer();
  REQUIRE(buffer.size() % 4 == 0);
  for (size_t i = 0; i < buffer.size(); i += 4) {
    uint32_t w = 0;
    for (int b = 0; b < 4; ++b) w |= static_cast<uint32_t>(buffer.data()[i + static_cast<size_t>(b)]) << (8 * b);
    out.words.push_back(w);
  }
  out.text = log.data();
  return out;
}

// One expected word: (word & mask) == value (branches leave their offset out).
struct W {
  uint32_t value;
  uint32_t mask = 0xFFFFFFFF;
};
constexpr uint32_t kCond = 0xFF00001F;  // b.cond: the opcode and the condition, not the offset
W b_cond(uint32_t cond) { return W{0x54000000u | cond, kCond}; }
constexpr uint32_t kLT = 0xB, kVS = 0x6, kNE = 0x1;

// Whether `seq` appears as consecutive words.
bool contains(const std::vector<uint32_t>& words, const std::vector<W>& seq) {
  for (size_t i = 0; i + seq.size() <= words.size(); ++i) {
    size_t k = 0;
    while (k < seq.size() && (words[i + k] & seq[k].mask) == seq[k].value) ++k;
    if (k == seq.size()) return true;
  }
  return false;
}

// No FMADD/FMSUB/FNMADD/FNMSUB (floating-point data-processing, 3 sources: top byte 0x1F).
bool any_fused(const std::vector<uint32_t>& words) {
  for (uint32_t w : words)
    if ((w & 0xFF000000) == 0x1F000000) return true;
  return false;
}

}  // namespace

TEST_CASE("a64: LOOP spends a step from x21; ADD_INT is adds + b.vs in the slot's register, undone on overflow") {
  // loop: LOOP; s0 = s0 + s1 (overflow leaves); if s0 < s2 go back
  auto f = one_loop({Instr{Op::LOOP, 0, 0, 0, 0}, Instr{Op::ADD_INT, 0, 0, 1, 0}, Instr{Op::JLT_INT, 0, 0, 2, -2}});
  Emitted e = emit(*f);
  CAPTURE(e.text);
  CHECK(e.info.gp_pinned == 3);
  CHECK(e.info.memory_slots == 0);
  CHECK(contains(e.words, {
                              W{0xf10006b5},  // subs x21, x21, #1
                              b_cond(kLT),    // b.lt <budget spent>
                              W{0xab1702d6},  // adds x22, x22, x23
                              b_cond(kVS),    // b.vs <undo, then leave at the ADD_INT>
                              W{0xeb1802df},  // cmp x22, x24
                              b_cond(kLT),    // b.lt <the LOOP>
                          }));
  // out of line: the wrapped sum undone, so the interpreter re-executes the ADD_INT on its operands
  CHECK(contains(e.words, {W{0xcb1702d6} /* sub x22, x22, x23 */, W{0x14000000, 0xFC000000} /* b */}));
}

TEST_CASE("a64: ADD_INT into a third slot writes that slot's register directly") {
  // s3 = s0 + s2: A is neither B nor C, so no scratch register and no undo are needed
  auto f = one_loop({Instr{Op::LOOP, 0, 0, 0, 0}, Instr{Op::ADD_INT, 0, 0, 1, 0}, Instr{Op::ADD_INT, 3, 0, 2, 0},
                     Instr{Op::JLT_INT, 0, 3, 2, -3}});
  Emitted e = emit(*f);
  CAPTURE(e.text);
  // weights: s0 3, s2 2, s3 2, s1 1 -> x22 s0, x23 s2, x24 s3, x25 s1; s3 = s0 + s2 goes straight
  // into x24 (A is neither B nor C)
  CHECK(contains(e.words, {W{0xab1702d8} /* adds x24, x22, x23 */, b_cond(kVS)}));
}

TEST_CASE("a64: MUL_INT checks overflow with smulh against the sign of the low half") {
  auto f = one_loop({Instr{Op::LOOP, 0, 0, 0, 0}, Instr{Op::MUL_INT, 0, 0, 1, 0}, Instr{Op::JLT_INT, 0, 0, 2, -2}});
  Emitted e = emit(*f);
  CAPTURE(e.text);
  CHECK(contains(e.words, {
                              W{0x9b177ecb},  // mul x11, x22, x23
                              W{0x9b577ecc},  // smulh x12, x22, x23
                              W{0xeb8bfd9f},  // cmp x12, x11, asr #63
                              b_cond(kNE),    // b.ne <leave at the MUL_INT>
                              W{0xaa0b03f6},  // mov x22, x11
                          }));
}

TEST_CASE("a64: num arithmetic is a separate fmul and fadd in d registers, never a fused multiply-add") {
  // s3 = s3 * s4; s3 = s3 + s5 (mandelbrot's shape, a*b+c): two roundings, as the interpreter
  auto f = one_loop({Instr{Op::LOOP, 0, 0, 0, 0}, Instr{Op::MUL_NUM, 3, 3, 4, 0}, Instr{Op::ADD_NUM, 3, 3, 5, 0},
                     Instr{Op::ADDI_INT, 0, 0, 0, 1}, Instr{Op::JLT_INT, 0, 0, 2, -4}});
  Emitted e = emit(*f);
  CAPTURE(e.text);
  CHECK(e.info.fp_pinned == 3);
  CHECK(contains(e.words, {
                              W{0x1e690908},  // fmul d8, d8, d9
                              W{0x1e6a2908},  // fadd d8, d8, d10
                          }));
  CHECK(!any_fused(e.words));
}

TEST_CASE("a64: a real program's loops compile with no fused multiply-add and keep its slots in registers") {
  using namespace pure;
  const char* text = R"(fn main() {
  var zr = 0.0
  var zi = 0.0
  var n = 0
  while n < 100 and zr * zr + zi * zi <= 4.0 {
    let t = zr * zr - zi * zi + 0.25
    zi = 2.0 * zr * zi + 0.5
    zr = t
    n += 1
  }
  print(n)
}
)";
  std::unique_ptr<vm::Program> program = test::compile_module(text, "t.pure");
  const vm::Function& main = program->functions[static_cast<size_t>(program->main)];
  REQUIRE(main.loops.size() == 1);
  Emitted e = emit(main);
  CAPTURE(e.text);
  CHECK(!any_fused(e.words));
  CHECK(e.info.fp_pinned >= 2);  // zr, zi
  CHECK(e.info.gp_pinned >= 1);  // n
  CHECK(e.text.find("fmul") != std::string::npos);
  CHECK(e.text.find("fadd") != std::string::npos);
}

// BackendKind::nested_entries: a nest's code is entered at the head of every loop in it (the
// tier publishes it for the inner loops too), an inner loop's code at its own head only. Each
// head is one `cmp x2, x9` of the entry dispatch (x2 the pc entered at, x9 the head's address).
TEST_CASE("a64: a loop's entry dispatch takes the heads of the loops nested in it") {
  using namespace pure;
  const char* text = R"(fn main() {
  var t = 0
  for a in 0 .. 3 {
    for b in 0 .. 4 {
      var k = 0
      while k < 50 {
        t += (k * a + b) % 13
        k += 1
      }
    }
    t += a
  }
  print(t)
}
)";
  std::unique_ptr<vm::Program> program = test::compile_module(text, "t.pure");
  const vm::Function& main = program->functions[static_cast<size_t>(program->main)];
  REQUIRE(main.loops.size() == 3);
  auto depth_of = [&](uint32_t l) {
    int d = 0;
    for (int32_t x = main.loops[l].parent; x >= 0; x = main.loops[static_cast<size_t>(x)].parent) ++d;
    return d;
  };
  auto heads_in = [&](uint32_t outer, bool nested) {  // heads of `outer` (and of the loops nested in it)
    int n = 0;
    for (uint32_t pc = 0; pc < main.code.size(); ++pc)
      for (uint32_t l = 0; l < main.loops.size(); ++l) {
        if (!vm::heads_loop(main, main.code[pc], l)) continue;
        for (int32_t x = static_cast<int32_t>(l); x >= 0 && (nested || x == static_cast<int32_t>(l));
             x = main.loops[static_cast<size_t>(x)].parent)
          n += x == static_cast<int32_t>(outer);
      }
    return n;
  };
  auto dispatch_compares = [](const Emitted& e) {
    int n = 0;
    for (uint32_t w : e.words) n += w == 0xEB09005F;  // cmp x2, x9
    return n;
  };
  for (uint32_t l = 0; l < 3; ++l) {
    CAPTURE(l);
    Emitted e = emit(main, l);
    CAPTURE(e.text);
    CHECK(heads_in(l, false) >= 1);
    if (depth_of(l) < 2) CHECK(heads_in(l, true) > heads_in(l, false));  // it has loops inside
    CHECK(dispatch_compares(e) == heads_in(l, true));  // (no list: one version)
  }
}

TEST_CASE("a64: instructions that change the frame leave; the rest is native or pure_step") {
#define PURE_OP(name, flags, inverse, doc)                                                            \
  if (pure::ir::op_changes_frame(Op::name))                                                           \
    CHECK_MESSAGE(pure::jit::a64::lowering_of(Op::name) == pure::jit::Lowering::Exit, #name);
#include "ir/ops.def"
#undef PURE_OP
  CHECK(pure::jit::a64::lowering_of(Op::FAIL) == pure::jit::Lowering::Exit);
  CHECK(pure::jit::a64::lowering_of(Op::CONCAT) == pure::jit::Lowering::Step);
  CHECK(pure::jit::a64::lowering_of(Op::MUL_NUM) == pure::jit::Lowering::Native);
}

TEST_CASE("a64: slots past the callee-saved registers live in caller-saved ones, stored around calls into C") {
  // ten num slots (1..10) in a chain of multiplications, then one MOD_NUM (a call to fmod): eight
  // go to d8..d15, two to d19, d20, and those two are stored before the call and loaded after it
  std::vector<Instr> body = {Instr{Op::LOOP, 0, 0, 0, 0}};
  for (uint16_t s = 1; s < 10; ++s) body.push_back(Instr{Op::MUL_NUM, static_cast<uint16_t>(s + 1), s, s, 0});
  body.push_back(Instr{Op::MOD_NUM, 1, 10, 2, 0});
  body.push_back(Instr{Op::ADDI_INT, 0, 0, 0, 1});
  body.push_back(Instr{Op::JLT_INT, 0, 0, 11, -12});
  auto f = one_loop(body);
  Emitted e = emit(*f);
  CAPTURE(e.text);
  CHECK(e.info.fp_pinned == 10);
  CHECK(e.info.memory_slots == 0);
  size_t call = e.text.find("blr x16");
  REQUIRE(call != std::string::npos);
  size_t store = e.text.rfind("str d19", call), load = e.text.find("ldr d19", call);
  CHECK(store != std::string::npos);
  CHECK(load != std::string::npos);
  CHECK(e.text.rfind("str d20", call) != std::string::npos);
  // the prologue saves only callee-saved registers: d8..d15, never d19
  CHECK(e.text.find("stp d8, d9") != std::string::npos);
  CHECK(e.text.find("stp d19") == std::string::npos);
  CHECK(!any_fused(e.words));
}

TEST_CASE("a64: a loop whose lists cannot change gets a second version without the plain checks") {
  // LOOP; s3 = s1[s0] (SEQ_GET); s1[s0] = s3 (SEQ_SET); s0 += 1; if s0 < s2 go back
  auto f = one_loop({Instr{Op::LOOP, 0, 0, 0, 0}, Instr{Op::SEQ_GET, 3, 1, 0, 0}, Instr{Op::SEQ_SET, 3, 1, 0, 0},
                     Instr{Op::ADDI_INT, 0, 0, 0, 1}, Instr{Op::JLT_INT, 0, 0, 2, -4}});
  Emitted e = emit(*f);
  CAPTURE(e.text);
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = e.text.find(what); at != std::string::npos; at = e.text.find(what, at + 1)) ++n;
    return n;
  };
  if (pure::rt::EventList::native_layout().ok) {
    CHECK(count("ldrb w10") == 1);  // the entry check of s1's plain flag
    CHECK(count("ldrb w11") == 2);  // the general version checks at SEQ_GET and SEQ_SET
    CHECK(count("str x") >= 2);     // both versions store the cell
  }
  // a stepped instruction (CONCAT) in the loop may write any slot: no second version
  auto g = one_loop({Instr{Op::LOOP, 0, 0, 0, 0}, Instr{Op::SEQ_GET, 3, 1, 0, 0}, Instr{Op::CONCAT, 4, 5, 6, 0},
                     Instr{Op::ADDI_INT, 0, 0, 0, 1}, Instr{Op::JLT_INT, 0, 0, 2, -4}});
  Emitted h = emit(*g);
  CHECK(h.text.find("ldrb w10") == std::string::npos);
}

namespace {
// LDRB (unsigned offset) and LDRB/STRB (register offset, LSL #0), as GNU as gives them:
// `ldrb w11, [x23, #40]` = 3940a2eb, `ldrb w24, [x11, x22]` = 38766978, `strb w24, [x11, x22]` =
// 38366978; `cmp x22, x11` = eb0b02df; `cbz w11` = 3400000b with its offset left out.
uint32_t ldrb_imm(uint32_t t, uint32_t n, uint32_t off) { return 0x39400000u | off << 10 | n << 5 | t; }
uint32_t ldrb_reg(uint32_t t, uint32_t n, uint32_t m) { return 0x38606800u | m << 16 | n << 5 | t; }
uint32_t strb_reg(uint32_t t, uint32_t n, uint32_t m) { return 0x38206800u | m << 16 | n << 5 | t; }
uint32_t ldr_x_at(uint32_t t, uint32_t n, uint32_t off) { return 0xF9400000u | (off / 8) << 10 | n << 5 | t; }
W cbz_w(uint32_t t) { return W{0x34000000u | t, 0xFF00001F}; }
constexpr uint32_t kHS = 0x2;
}  // namespace

TEST_CASE("a64: SEQ_GET/SEQ_SET hinted narrow read and write the list's byte in place, checked narrow and in range") {
  // LOOP; s3 = s1[s0] (SEQ_GET, IMM 1); s1[s0] = s3 (SEQ_SET, IMM 1); s0 += 1; if s0 < s2 go back.
  // By weight: s0 in x22, s3 in x23, s2 in x24, and s1 (the list, cached in the second version:
  // its count in x15, its bytes in x8) last, in x25.
  auto f = one_loop({Instr{Op::LOOP, 0, 0, 0, 0}, Instr{Op::SEQ_GET, 3, 1, 0, 1}, Instr{Op::SEQ_SET, 3, 1, 0, 1},
                     Instr{Op::ADDI_INT, 0, 0, 0, 1}, Instr{Op::JLT_INT, 0, 0, 2, -4}});
  Emitted e = emit(*f);
  CAPTURE(e.text);
  const pure::rt::EventList::NativeLayout layout = pure::rt::EventList::native_layout();
  if (!layout.ok) return;  // then both run through pure_step
  REQUIRE(layout.narrow < 4096);
  auto count_of = [&](const std::vector<W>& seq) {
    size_t n = 0;
    for (size_t i = 0; i + seq.size() <= e.words.size(); ++i)
      if (contains(std::vector<uint32_t>(e.words.begin() + static_cast<long>(i), e.words.begin() + static_cast<long>(i + seq.size())), seq)) ++n;
    return n;
  };
  const W narrow_check{ldrb_imm(11, 25, layout.narrow)}, cbz_check = cbz_w(11);
  const std::vector<W> get = {{ldr_x_at(11, 25, layout.count)}, {0xEB0B02DF}, b_cond(kHS), {ldr_x_at(11, 25, layout.bytes)},
                              {ldrb_reg(23, 11, 22)}};
  const std::vector<W> set = {{ldr_x_at(11, 25, layout.count)}, {0xEB0B02DF}, b_cond(kHS), {ldr_x_at(11, 25, layout.bytes)},
                              {strb_reg(23, 11, 22)}};
  // the general version checks the narrow flag at each instruction
  std::vector<W> checked_get = {narrow_check, cbz_check};
  checked_get.insert(checked_get.end(), get.begin(), get.end());
  std::vector<W> checked_set = {narrow_check, cbz_check};
  checked_set.insert(checked_set.end(), set.begin(), set.end());
  CHECK(count_of(checked_get) == 1);
  CHECK(count_of(checked_set) == 1);
  // the second version, entered when s1 is narrow (checked once at entry), does not, and reads
  // s1's count and bytes once there (x15, x8): its accesses are a compare and the byte
  CHECK(count_of({{ldrb_imm(10, 25, layout.narrow)}, cbz_w(10), {ldr_x_at(15, 25, layout.count)}, {ldr_x_at(8, 25, layout.bytes)}}) == 1);
  CHECK(count_of(get) == 1);
  CHECK(count_of(set) == 1);
  CHECK(count_of({{0xEB0F02DF}, b_cond(kHS), {ldrb_reg(23, 8, 22)}}) == 1);  // cmp x22, x15; b.hs; ldrb w23, [x8, x22]
  CHECK(count_of({{0xEB0F02DF}, b_cond(kHS), {strb_reg(23, 8, 22)}}) == 1);  // cmp x22, x15; b.hs; strb w23, [x8, x22]
  CHECK(count_of({narrow_check}) == 2);
  // never the plain flag, and never a cell (8-byte) access of the rows
  CHECK(count_of({{ldrb_imm(11, 25, layout.plain)}}) == 0);
  CHECK(count_of({{ldrb_imm(10, 25, layout.plain)}}) == 0);
  CHECK(e.text.find("lsl #3") == std::string::npos);

  // a list a SEQ_PUSH (a plain list's path) and a narrow SEQ_GET both use is assumed neither: no
  // second version
  auto g = one_loop({Instr{Op::LOOP, 0, 0, 0, 0}, Instr{Op::SEQ_GET, 3, 1, 0, 1}, Instr{Op::SEQ_PUSH, 3, 1, 0, 0},
                     Instr{Op::ADDI_INT, 0, 0, 0, 1}, Instr{Op::JLT_INT, 0, 0, 2, -4}});
  Emitted h = emit(*g);
  CAPTURE(h.text);
  CHECK(h.text.find("ldrb w10") == std::string::npos);
  CHECK(h.text.find("ldrb w11") != std::string::npos);
}

TEST_CASE("a64: the second version keeps a list's count and cells in registers when nothing in the loop replaces or pushes it") {
  // LOOP; s3 = s1[s0]; if s3 >= 0 skip the next; s1[s0] = s4; s0 += 1; if s0 < s2 go back
  auto f = one_loop({Instr{Op::LOOP, 0, 0, 0, 0}, Instr{Op::SEQ_GET, 3, 1, 0, 0}, Instr{Op::JGE_INT_K, 0, 3, 0, 2},
                     Instr{Op::SEQ_SET, 4, 1, 0, 0}, Instr{Op::ADDI_INT, 0, 0, 0, 1}, Instr{Op::JLT_INT, 0, 0, 2, -5}});
  Emitted e = emit(*f);
  CAPTURE(e.text);
  const pure::rt::EventList::NativeLayout layout = pure::rt::EventList::native_layout();
  if (!layout.ok) return;
  // by weight: s0 x22, s3 x23, s2 x24, s4 x25, s1 (cached: count x15, cells x8) x26
  auto ldr_at = [](uint32_t t, uint32_t n, uint32_t off) { return W{0xF9400000u | (off / 8) << 10 | n << 5 | t}; };
  // at the second version's entry, after s1's plain check
  CHECK(contains(e.words, {cbz_w(10), ldr_at(15, 26, layout.count), ldr_at(8, 26, layout.begin)}));
  CHECK(contains(e.words, {{0xEB0F02DF}, b_cond(kHS), {0xF8767917}}));  // cmp x22, x15; b.hs; ldr x23, [x8, x22, lsl #3]
  CHECK(contains(e.words, {{0xEB0F02DF}, b_cond(kHS), {0xF8367919}}));  // cmp x22, x15; b.hs; str x25, [x8, x22, lsl #3]
  // s3 >= 0 against 0: the sign bit
  CHECK(contains(e.words, {{0xB6F80017, 0xFFF8001F}}));  // tbz x23, #63, <the ADDI_INT>
  // pure_step (an access out of range) may grow any list: the cache read again after it
  size_t call = e.text.find("blr x16");
  REQUIRE(call != std::string::npos);
  CHECK(e.text.find("ldr x15, [x26", call) != std::string::npos);
  // a list the loop pushes onto is not cached (its count changes at every pass)
  auto g = one_loop({Instr{Op::LOOP, 0, 0, 0, 0}, Instr{Op::SEQ_GET, 3, 1, 0, 0}, Instr{Op::SEQ_PUSH, 3, 1, 0, 0},
                     Instr{Op::ADDI_INT, 0, 0, 0, 1}, Instr{Op::JLT_INT, 0, 0, 2, -4}});
  Emitted h = emit(*g);
  CAPTURE(h.text);
  CHECK(h.text.find("ldrb w10") != std::string::npos);  // (it has its second version)
  CHECK(h.text.find("x15") == std::string::npos);
}

namespace {
// LDR/STR (unsigned offset) of an X or W register: the words GNU as gives for these forms
// (`ldr x9, [x19, #48]` = f9401a69, `ldr w13, [x9, #56]` = b940392d, `str x13, [x9, #32]` =
// f900112d); the offsets of the iterator's fields are the build's (vm::iterator_layout()).
uint32_t ldr_x(uint32_t t, uint32_t n, uint32_t off) { return 0xF9400000u | (off / 8) << 10 | n << 5 | t; }
uint32_t str_x(uint32_t t, uint32_t n, uint32_t off) { return 0xF9000000u | (off / 8) << 10 | n << 5 | t; }
uint32_t ldr_w(uint32_t t, uint32_t n, uint32_t off) { return 0xB9400000u | (off / 4) << 10 | n << 5 | t; }
}  // namespace

TEST_CASE("a64: ITER_NEXT takes the next row of a leaf run inline, when budget is left and the width matches") {
  // loop 0, headed by the ITER_NEXT at pc 0 (C = the loop's program-wide index, 7 here): the row's
  // two cells into s0 s1 from iterator s2, exit to pc 3; s3 += s1; back to the ITER_NEXT
  auto f = one_loop({Instr{Op::ITER_NEXT, 0, 2, 7, 3}, Instr{Op::ADD_INT, 3, 3, 1, 0}, Instr{Op::JUMP, 0, 0, 0, -2}});
  f->loops[0].index = 7;
  REQUIRE(pure::vm::heads_loop(*f, f->code[0], 0));
  REQUIRE(pure::jit::iter_row_width(f->code, 0) == 2);
  Emitted e = emit(*f);
  CAPTURE(e.text);
  // weights: s1 2, s3 2, s0 1, s2 1 -> x22 s1, x23 s3, x24 s0, x25 s2
  CHECK(e.info.gp_pinned == 4);
  CHECK(e.info.memory_slots == 0);
  const pure::vm::IteratorLayout it = pure::vm::iterator_layout();
  REQUIRE(it.size < 65536);
  REQUIRE(it.run % 8 == 0);
  REQUIRE(it.run_left % 8 == 0);
  REQUIRE(it.width % 4 == 0);
  REQUIRE(it.size == 256);
  REQUIRE(it.run_left == it.run + 8);
  REQUIRE(it.run <= 504);
  constexpr uint32_t kLT = 0xB;
  // ldp/stp x13, x12, [x9, #run] (signed offset, 64-bit): imm7 = run / 8
  const uint32_t ldp = 0xA9400000u | (it.run / 8) << 15 | 12u << 10 | 9u << 5 | 13u;
  const uint32_t stp = 0xA9000000u | (it.run / 8) << 15 | 12u << 10 | 9u << 5 | 13u;
  CHECK(contains(e.words, {
                              W{ldr_x(9, 19, static_cast<uint32_t>(pure::vm::kCoreIters))},  // ldr x9, [x19, #iters]
                              W{0x8b192129},                       // add x9, x9, x25, lsl #8: the iterator
                              W{0xf10006b5},                       // subs x21, x21, #1: the step
                              b_cond(kLT),                         // b.lt <pure_step, the step given back: the budget is spent>
                              W{ldp},                              // ldp x13, x12, [x9, #run]: run, run_left
                              W{0xB400000C, 0xFF00001F},           // cbz x12 <the refill: a new run or the end>
                              W{ldr_w(10, 9, it.width)},           // ldr w10, [x9, #width]
                              W{0x7100095f},                       // cmp w10, #2
                              b_cond(kNE),                         // b.ne <pure_step: another width>
                              W{0xf94001b8},                       // ldr x24, [x13]: s0
                              W{0xf94005b6},                       // ldr x22, [x13, #8]: s1
                              W{0x910041ad},                       // add x13, x13, #16
                              W{0xd100058c},                       // sub x12, x12, #1
                              W{stp},                              // stp x13, x12, [x9, #run]
                              W{0xab1602f7},                       // adds x23, x23, x22: the body
                          }));
  // the uncommon cases run the whole instruction through pure_step (at its stand-in address)
  CHECK(e.text.find("blr x16") != std::string::npos);
  CHECK(pure::jit::a64::lowering_of(Op::ITER_NEXT) == pure::jit::Lowering::Native);
  // no row width to serve inline (B right after A): the whole instruction through pure_step
  auto g = one_loop({Instr{Op::ITER_NEXT, 2, 2, 7, 3}, Instr{Op::ADD_INT, 3, 3, 1, 0}, Instr{Op::JUMP, 0, 0, 0, -2}});
  g->loops[0].index = 7;
  Emitted h = emit(*g);
  CAPTURE(h.text);
  CHECK(h.text.find("ldr x9, [x19") == std::string::npos);
  CHECK(h.text.find("blr x16") != std::string::npos);
}

// mov x16, #target (one word for a stand-in below 65536, its form asmjit's choice: the listing
// names the target), then blr x16.
std::vector<W> call_to(uint32_t) { return {W{0, 0}, W{0xD63F0200}}; }

TEST_CASE("a64: ITER_NEXT over a text's pieces is pure_jit_iter_next_piece after the step, pure_step only for the rest") {
  // no row width (A == B): the step first (x21), then the call with x0..x2 = core, frame, ip; its
  // answer: 0 the fault, 2 pure_step (the step given back), 3 the end (IMM), else pc + 1
  auto g = one_loop({Instr{Op::ITER_NEXT, 2, 2, 7, 3}, Instr{Op::ADD_INT, 3, 3, 1, 0}, Instr{Op::JUMP, 0, 0, 0, -2}});
  g->loops[0].index = 7;
  REQUIRE(pure::jit::iter_row_width(g->code, 0) == 0);
  const std::vector<W> answer = {call_to(0xB000)[0], call_to(0xB000)[1],
                                 W{0xB4000000, 0xFF00001F},  // cbz x0 <the fault: leave with kFaulted>
                                 W{0xF100081F},              // cmp x0, #2
                                 b_cond(0)};                 // b.eq <not pieces: pure_step>
  Emitted h = emit(*g, 0, false, true);
  CAPTURE(h.text);
  CHECK(h.text.find("x16, 45056") != std::string::npos);
  CHECK(contains(h.words, {W{0xf10006b5}, b_cond(kLT)}));  // subs x21, x21, #1; b.lt <the budget spent>
  CHECK(contains(h.words, {W{0xAA1303E0}, W{0xAA1403E1}}));  // mov x0, x19; mov x1, x20
  CHECK(contains(h.words, answer));
  CHECK(contains(h.words, {W{0xF1000C1F}, b_cond(0)}));  // cmp x0, #3; b.eq <no more pieces: IMM>
  CHECK(h.text.find("x16, 4096") != std::string::npos);  // pure_step still, out of line
  // a row width (ITER_NEXT 0, 2): the inline rows as before, and an iterator of another width
  // (a text's pieces have none) reaches the same call, its step already spent
  auto f = one_loop({Instr{Op::ITER_NEXT, 0, 2, 7, 3}, Instr{Op::ADD_INT, 3, 3, 1, 0}, Instr{Op::JUMP, 0, 0, 0, -2}});
  f->loops[0].index = 7;
  REQUIRE(pure::jit::iter_row_width(f->code, 0) == 2);
  Emitted e = emit(*f, 0, false, true);
  CAPTURE(e.text);
  CHECK(contains(e.words, answer));
  CHECK(contains(e.words, {W{0xF1000C1F}, b_cond(0)}));
  // without the call (another backend's targets): no such sequence
  Emitted plain = emit(*f);
  CHECK(plain.text.find("x16, 45056") == std::string::npos);
}

TEST_CASE("a64: ST_ITER and ITER_END are their runtime calls, and an empty run is refilled by one, not pure_step") {
  // loop: LOOP; s5 = iterator over list 0 by the prefix in s1; its rows (s3, s4) until done (to pc 4);
  // ITER_END releases from s5; back to the LOOP
  auto f = one_loop({Instr{Op::LOOP, 0, 0, 0, 0}, Instr{Op::ST_ITER, 5, 0, 1, 1}, Instr{Op::ITER_NEXT, 3, 5, pure::vm::kNoLoopIndex, 2},
                     Instr{Op::JUMP, 0, 0, 0, -1}, Instr{Op::ITER_END, 0, 5, 0, 0}, Instr{Op::JUMP, 0, 0, 0, -5}});
  REQUIRE(pure::jit::iter_row_width(f->code, 2) == 2);
  CHECK(pure::jit::a64::lowering_of(Op::ST_ITER) == pure::jit::Lowering::Native);
  CHECK(pure::jit::a64::lowering_of(Op::ITER_END) == pure::jit::Lowering::Native);
  Emitted e = emit(*f);
  CAPTURE(e.text);
  // s5 (the iterator, 3 uses) x22; s1 x23 (the key), s3 x24, s4 x25 by weight and then slot order
  CHECK(contains(e.words, {
                              W{str_x(23, 20, 8)},         // str x23, [x20, #8]: the key cell in the frame
                              W{0xAA1303E0},               // mov x0, x19: the core
                              W{0xAA1403E1},               // mov x1, x20: the frame
                          }));
  for (const char* target : {"x16, 24576", "x16, 28672", "x16, 32768"}) CHECK(e.text.find(target) != std::string::npos);
  CHECK(contains(e.words, {call_to(0x6000)[0], call_to(0x6000)[1],
                           W{0xB4000000, 0xFF00001F},  // cbz x0 <the fault: leave with kFaulted>
                           W{ldr_x(22, 20, 40)}}));    // ldr x22, [x20, #40]: slot A as the call wrote it
  CHECK(contains(e.words, {W{0xAA1603E1},              // mov x1, x22: down_to, slot B
                           W{0xAA1303E0},              // mov x0, x19
                           call_to(0x8000)[0], call_to(0x8000)[1]}));
  // the run empty: a flat form's one run (one_run set) is the end of the rows, without a call
  CHECK(contains(e.words, {W{0x39400000u | pure::vm::iterator_layout().one_run << 10 | 9u << 5 | 13u},  // ldrb w13, [x9, #one_run]
                           W{0x3500000D, 0xFF00001F}}));  // cbnz w13 <the rows are done>
  CHECK(contains(e.words, {W{0xAA0903E0},              // mov x0, x9: the iterator
                           call_to(0x7000)[0], call_to(0x7000)[1],
                           W{0xB4000001, 0xFF00001F},  // cbz x1 <the rows are done>
                           W{0xF9400018},              // ldr x24, [x0]: s3
                           W{0xF9400419}}));           // ldr x25, [x0, #8]: s4
}

TEST_CASE("a64: a prefix walk of native code's own: its cursor in x15/x8, only the cells read, ITER_END without a call, the iterator made on the way out") {
  // LOOP; s5 = the walk of list 0 by the prefix in s1; its rows (s3, s4) until done (to pc 5);
  // s6 += s4 (s3 is read nowhere); ITER_END of s5; back to the LOOP
  auto f = one_loop({Instr{Op::LOOP, 0, 0, 0, 0}, Instr{Op::ST_ITER, 5, 0, 1, 1}, Instr{Op::ITER_NEXT, 3, 5, pure::vm::kNoLoopIndex, 3},
                     Instr{Op::ADD_INT, 6, 6, 4, 0}, Instr{Op::JUMP, 0, 0, 0, -2}, Instr{Op::ITER_END, 0, 5, 0, 0},
                     Instr{Op::JUMP, 0, 0, 0, -6}});
  REQUIRE(pure::jit::iter_row_width(f->code, 2) == 2);
  Emitted e = emit(*f, 0, true);
  CAPTURE(e.text);
  // ST_ITER is st_iter_rows (x3 = the walk, its width stored in it), never st_iter; the epilogue
  // makes the iterator of a walk still going; an iterator from the interpreter still takes the
  // old ways (refill, release)
  CHECK(e.text.find("x16, 36864") != std::string::npos);
  CHECK(e.text.find("x16, 40960") != std::string::npos);
  CHECK(e.text.find("x16, 24576") == std::string::npos);
  for (const char* target : {"x16, 28672", "x16, 32768"}) CHECK(e.text.find(target) != std::string::npos);
  CHECK(contains(e.words, {W{0xD2800043},               // mov x3, #2: the width
                           W{0xF90003E3, 0xFFC003FF},  // str x3, [sp, #<the walk's width>]
                           W{0x910003E3, 0xFFC003FF}}));  // add x3, sp, #<the walk>
  CHECK(e.text.find("x4") == std::string::npos);  // (x4..x8 hold slots across calls)
  // by weight: s4 x22, s6 x23, s1 (the key) x24, s5 x25 (ITER_END's); the walk's ITER_NEXT: the
  // step, the end of the rows (x8 = run_left 0), s4 from the run (x15), the cursor moved, the body
  CHECK(contains(e.words, {W{0xf10006b5},                 // subs x21, x21, #1
                           b_cond(kLT),                   // b.lt <the budget spent>
                           W{0xB4000008, 0xFF00001F},     // cbz x8 <no row left: the end, or an iterator>
                           W{0xF94005F6},                 // ldr x22, [x15, #8]: s4
                           W{0x910041EF},                 // add x15, x15, #16
                           W{0xD1000508},                 // sub x8, x8, #1
                           W{0xAB1602F7}}));              // adds x23, x23, x22: s6 += s4
  for (uint32_t w : e.words) CHECK((w & 0xFFFFFFE0) != 0xF94001E0);  // no ldr of [x15, #0]: s3 is read nowhere
  // the cursor to the frame's walk around calls and where code leaves, and back after
  constexpr uint32_t kPairOffset = 0xFFC07FFF;
  CHECK(contains(e.words, {W{0xA90023EF, kPairOffset}}));  // stp x15, x8, [sp, #<run>]
  CHECK(contains(e.words, {W{0xA94023EF, kPairOffset}}));  // ldp x15, x8, [sp, #<run>]
  // the ST_ITER's own lookup, once its site is filled: key (s1, x24) - base against the span, the
  // two row numbers of the dense index: run_left into x8, the first row (16 bytes a row) into x15
  CHECK(contains(e.words, {W{0xCB0A030A},               // sub x10, x24, x10
                           W{0xEB0B015F},               // cmp x10, x11
                           b_cond(0x2),                 // b.hs <no rows with this key>
                           W{0x8B0A0929},               // add x9, x9, x10, lsl #2
                           W{0x29402D2A},               // ldp w10, w11, [x9]
                           W{0xCB0A0168},               // sub x8, x11, x10: the rows
                           W{0xF94003ED, 0xFFC003FF},   // ldr x13, [sp, #<the site's rows>]
                           W{0x8B0A11AF}}));            // add x15, x13, x10, lsl #4
  // after st_iter_rows: 2 (an iterator in slot A) leaves x8 0
  CHECK(contains(e.words, {W{0xF100081F},               // cmp x0, #2
                           W{0x9A8803E8}}));            // csel x8, xzr, x8, eq
  // its ITER_END: the walk's ST_ITER cleared (str xzr, [sp, #<ip>]), x8 0, no call
  CHECK(contains(e.words, {W{0xF90003FF, 0xFFC003FF}, W{0xD2800008}}));
  // without the walk calls the same loop plans no walk
  Emitted plain = emit(*f);
  CHECK(plain.text.find("x16, 36864") == std::string::npos);
  CHECK(plain.text.find("x16, 24576") != std::string::npos);
  CHECK(plain.text.find("x15") == std::string::npos);
}
