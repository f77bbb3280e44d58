// tests/ir/test_ir.cpp — lowering to the control-flow graph and loop analysis: headers, back
// edges, loop-bearing blocks and depths for while, for, nested and sequential loops, and
// analyze_loops on hand-built graphs.
// Depends on ir/ir.h and the frontend.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "ir/ir.h"
#include "tests/ir/ir_support.h"

using namespace pure;

namespace {

ir::Program lower(const std::string& text) {
  test::Compiled c(text);
  REQUIRE_MESSAGE(c.ok(), c.errors());
  return ir::lower_module(c.checked, "t.pure");
}

const ir::Function& function(const ir::Program& p, const std::string& name) {
  for (const ir::Function& f : p.functions)
    if (f.name == name) return f;
  FAIL("no function " << name);
  return p.functions[0];
}

bool has(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// Properties every analysed function must have, whatever its shape: the IR verifier's.
void check_invariants(const ir::Function& f, bool lowered = true) { CHECK(ir::verify_function(f, lowered).error == ""); }

int count_bearing(const ir::Function& f) {
  int n = 0;
  for (const ir::Block& b : f.blocks) n += b.loop_bearing;
  return n;
}

}  // namespace

TEST_CASE("ir: straight-line code and branches have no loops") {
  ir::Program p = lower("fn f(a: int) -> int { if a > 0 { return 1 } else { return 2 } }\nfn main() { print(f(1)) }");
  for (const ir::Function& f : p.functions) {
    check_invariants(f);
    CHECK(f.loops.empty());
    CHECK(count_bearing(f) == 0);
  }
  CHECK(p.main >= 0);
  CHECK(p.functions[p.main].name == "main");
}

TEST_CASE("ir: a while loop has one header, a back edge, and only its blocks are loop-bearing") {
  ir::Program p = lower("fn main() {\n var i = 0\n while i < 10 { i += 1 }\n print(i)\n}");
  const ir::Function& f = function(p, "main");
  check_invariants(f);
  REQUIRE(f.loops.size() == 1);
  const ir::Loop& loop = f.loops[0];
  CHECK(loop.back_edges.size() == 1);
  CHECK_FALSE(f.blocks[0].loop_bearing);  // the entry runs once
  // the block with the print (a call to a builtin, after the loop) is not in the loop
  for (size_t b = 0; b < f.blocks.size(); ++b)
    for (const ir::Inst& in : f.blocks[b].insts)
      if (in.op == ir::Op::BUILTIN) CHECK_FALSE(f.blocks[b].loop_bearing);
  // the header spends a step of the budget
  bool header_counts = false;
  for (const ir::Inst& in : f.blocks[loop.header].insts) header_counts |= in.op == ir::Op::LOOP;
  CHECK(header_counts);
}

TEST_CASE("ir: for over a range, over a sequence and over a keyed list are loops") {
  const char* bodies[] = {
      "var t = 0\n for i in 0 .. 10 { t += i }\n print(t)",
      "var t = 0\n let xs = [1, 2, 3]\n for x in xs { t += x }\n print(t)",
      "var t = 0\n let xs = [1, 2, 3]\n for i, x in xs { t += i * x }\n print(t)",
      "var t = 0\n let m = list by k: int { v: int = 0 }\n m[3].v = 4\n for r in m { t += r.v }\n print(t)",
  };
  for (const char* body : bodies) {
    CAPTURE(body);
    ir::Program p = lower(std::string("fn main() {\n ") + body + "\n}");
    const ir::Function& f = function(p, "main");
    check_invariants(f);
    CHECK(f.loops.size() == 1);
    CHECK_FALSE(f.blocks[0].loop_bearing);
  }
}

TEST_CASE("ir: nested loops: the inner loop is inside the outer, with depth 2") {
  ir::Program p = lower(
      "fn main() {\n var t = 0\n var i = 0\n while i < 3 {\n  for j in 0 .. 2 { if j == 1 { continue }\n t += j }\n"
      "  i += 1\n }\n print(t)\n}");
  const ir::Function& f = function(p, "main");
  check_invariants(f);
  REQUIRE(f.loops.size() == 2);
  const ir::Loop* inner = &f.loops[0];
  const ir::Loop* outer = &f.loops[1];
  if (inner->blocks.size() > outer->blocks.size()) std::swap(inner, outer);
  for (int b : inner->blocks) CHECK(has(outer->blocks, b));
  CHECK(f.blocks[inner->header].loop_depth == 2);
  CHECK(f.blocks[outer->header].loop_depth == 1);
  CHECK(inner->header != outer->header);
}

TEST_CASE("ir: sequential loops are disjoint; break and continue stay inside the loop") {
  ir::Program p = lower(
      "fn main() {\n var t = 0\n for i in 0 .. 5 { if i == 3 { break }\n t += i }\n"
      " while t > 0 { if t % 2 == 0 { t -= 1\n continue }\n t -= 3 }\n print(t)\n}");
  const ir::Function& f = function(p, "main");
  check_invariants(f);
  REQUIRE(f.loops.size() == 2);
  for (int b : f.loops[0].blocks) CHECK_FALSE(has(f.loops[1].blocks, b));
  for (const ir::Loop& loop : f.loops) CHECK(f.blocks[loop.header].loop_depth == 1);
}

TEST_CASE("ir: loops in several functions, and recursion is not a loop") {
  ir::Program p = lower(
      "fn fib(n: int) -> int { if n < 2 { return n }\n return fib(n - 1) + fib(n - 2) }\n"
      "fn sum(n: int) -> int { var s = 0\n for i in 0 .. n { s += i }\n return s }\n"
      "fn main() { print(fib(10) + sum(10)) }");
  CHECK(function(p, "fib").loops.empty());
  CHECK(function(p, "sum").loops.size() == 1);
  CHECK(function(p, "main").loops.empty());
  for (const ir::Function& f : p.functions) check_invariants(f);
}

TEST_CASE("ir: analyze_loops on hand-built graphs") {
  auto jump = [](ir::Op op, int target) {
    ir::Inst in{op};
    in.imm = target;
    return in;
  };
  ir::Inst ret{ir::Op::RET};

  SUBCASE("a self-loop") {
    ir::Function f;
    f.blocks.resize(3);
    f.blocks[0].insts = {jump(ir::Op::JUMP, 1)};
    f.blocks[1].insts = {jump(ir::Op::JUMP_IF, 2), jump(ir::Op::JUMP, 1)};
    f.blocks[2].insts = {ret};
    ir::analyze_loops(f);
    check_invariants(f, false);
    REQUIRE(f.loops.size() == 1);
    CHECK(f.loops[0].header == 1);
    CHECK(f.loops[0].back_edges == std::vector<int>{1});
    CHECK(f.loops[0].blocks == std::vector<int>{1});
    CHECK_FALSE(f.blocks[2].loop_bearing);
  }
  SUBCASE("two back edges to one header make one loop") {
    ir::Function f;
    f.blocks.resize(5);
    f.blocks[0].insts = {jump(ir::Op::JUMP, 1)};
    f.blocks[1].insts = {jump(ir::Op::JUMP_IF, 4), jump(ir::Op::JUMP, 2)};
    f.blocks[2].insts = {jump(ir::Op::JUMP_IF, 1), jump(ir::Op::JUMP, 3)};
    f.blocks[3].insts = {jump(ir::Op::JUMP, 1)};
    f.blocks[4].insts = {ret};
    ir::analyze_loops(f);
    check_invariants(f, false);
    REQUIRE(f.loops.size() == 1);
    std::vector<int> back = f.loops[0].back_edges;
    std::sort(back.begin(), back.end());
    CHECK(back == std::vector<int>{2, 3});
    CHECK(f.loops[0].blocks.size() == 3);
  }
  SUBCASE("an unreachable block jumping to a header adds nothing") {
    ir::Function f;
    f.blocks.resize(4);
    f.blocks[0].insts = {jump(ir::Op::JUMP, 1)};
    f.blocks[1].insts = {jump(ir::Op::JUMP_IF, 1), jump(ir::Op::JUMP, 2)};
    f.blocks[2].insts = {ret};
    f.blocks[3].insts = {jump(ir::Op::JUMP, 1)};  // nothing jumps here
    ir::analyze_loops(f);
    REQUIRE(f.loops.size() == 1);
    CHECK_FALSE(has(f.loops[0].blocks, 3));
    CHECK_FALSE(f.blocks[3].loop_bearing);
  }
  SUBCASE("a jump into the middle of a cycle (irreducible) is not mistaken for a natural loop") {
    ir::Function f;
    f.blocks.resize(4);
    f.blocks[0].insts = {jump(ir::Op::JUMP_IF, 2), jump(ir::Op::JUMP, 1)};
    f.blocks[1].insts = {jump(ir::Op::JUMP_IF, 3), jump(ir::Op::JUMP, 2)};
    f.blocks[2].insts = {jump(ir::Op::JUMP, 1)};
    f.blocks[3].insts = {ret};
    ir::analyze_loops(f);
    // neither 1 nor 2 dominates the other: no back edge by the dominator rule
    CHECK(f.loops.empty());
  }
}

TEST_CASE("ir: the dump names headers, back edges and loop-bearing blocks") {
  ir::Program p = lower("fn main() {\n var i = 0\n while i < 10 { i += 1 }\n}");
  std::string dump = ir::dump_ir(p);
  CHECK(dump.find("loop-header") != std::string::npos);
  CHECK(dump.find("back edges from") != std::string::npos);
  CHECK(dump.find("loop-bearing") != std::string::npos);
}

TEST_CASE("ir: the verifier finds what is broken") {
  ir::Program p = lower("fn main() {\n var i = 0\n while i < 3 { i += 1 }\n print(i)\n}");
  ir::Function f = function(p, "main");
  REQUIRE(ir::verify_function(f).ok());
  SUBCASE("a jump to a block that does not exist") {
    f.blocks[0].insts.back().imm = 999;
    CHECK(ir::verify_function(f).error.find("jumps to block 999") != std::string::npos);
  }
  SUBCASE("a block that falls off its end") {
    f.blocks.back().insts.back() = ir::Inst{ir::Op::CONST};
    CHECK(ir::verify_function(f).error.find("does not end with JUMP, RET or FAIL") != std::string::npos);
  }
  SUBCASE("a loop that spends no step") {
    for (ir::Block& b : f.blocks)
      for (ir::Inst& in : b.insts)
        if (in.op == ir::Op::LOOP) in.op = ir::Op::CONST;
    CHECK(ir::verify_function(f).error.find("spends no step") != std::string::npos);
  }
  SUBCASE("edges that disagree") {
    f.blocks[0].preds.push_back(static_cast<int>(f.blocks.size() - 1));
    CHECK(ir::verify_function(f).error.find("predecessor without its edge") != std::string::npos);
  }
  SUBCASE("layout keeps a verified function verified") {
    std::vector<int> order = ir::layout_function(f);
    CHECK(ir::verify_function(f, true, &order).ok());
  }
}

TEST_CASE("ir: a function past the frame limit is a located error, at the list literal that fills it") {
  // issue 13: a 60,001-element list literal was "function 'main' is too large" at 1:1, no line
  auto list_of = [](int n) {
    std::string s = "[";
    for (int i = 0; i < n; ++i) s += i ? ", 1" : "1";
    return s + "]";
  };
  ir::Program big = lower("fn main() {\n  let n = 1\n  let xs = " + list_of(60001) + "\n  print(xs.count() + n)\n}\n");
  REQUIRE(big.errors.size() == 1);
  CHECK(big.errors[0].loc.line == 3);
  CHECK(big.errors[0].loc.col == 12);  // the '['
  CHECK(big.errors[0].message ==
        "function 'main' is too large: it needs more than 60000 slots (one per local, temporary and item field)");
  CHECK(big.errors[0].hint.find(".push in a loop") != std::string::npos);
  // inside a call, the literal is still the place
  ir::Program arg = lower("fn main() {\n  print(" + list_of(60001) + ".count())\n}\n");
  REQUIRE(arg.errors.size() == 1);
  CHECK(arg.errors[0].loc.line == 2);
  CHECK(arg.errors[0].loc.col == 9);
  // many small statements: the statement that passes the limit, in the function that does
  std::string locals = "fn small() { }\nevent e() {\n";
  for (int i = 0; i < 60010; ++i) locals += "  let v" + std::to_string(i) + " = " + std::to_string(i) + "\n";
  ir::Program many = lower(locals + "}\nfn main() { }\n");
  REQUIRE(many.errors.size() == 1);
  CHECK(many.errors[0].message.rfind("event 'e' is too large", 0) == 0);
  CHECK(many.errors[0].loc.line > 60000);
  CHECK(many.errors[0].loc.line < 60010);
  CHECK(many.errors[0].loc.col == 7);  // the name of the `let`
  CHECK(lower("fn main() {\n  print(" + list_of(20000) + ".count())\n}\n").errors.empty());
}

// The A, B, C columns of ir/ops.def against what lowering emits: an unused operand is 0, a slot
// operand names a slot of the frame or of the call area (a run may be empty and start anywhere
// at 0). A wrong column (a slot marked unused, a count or descriptor marked as a slot) fails here,
// and so does a KINDS letter that names an int or a num where the slot holds another kind.
static void check_operand_modes(const ir::Program& p, const std::string& what) {
  for (const ir::Function& f : p.functions)
    for (const ir::Block& b : f.blocks)
      for (const ir::Inst& in : b.insts)
        for (int i = 0; i < 3; ++i) {
          uint32_t v = i == 0 ? in.a : i == 1 ? in.b : in.c;
          ir::OperandMode m = ir::op_mode(in.op, i);
          bool frame_slot = v < f.slots.size(), area_slot = v >= ir::kScratch && v - ir::kScratch < f.scratch_slots;
          std::string where = what + ": " + f.name + ": " + ir::op_name(in.op) + " operand " + "ABC"[i] + " = " + std::to_string(v);
          switch (m) {
            case ir::OperandMode::Unused: CHECK_MESSAGE(v == 0, where); break;
            case ir::OperandMode::Read: case ir::OperandMode::Write: case ir::OperandMode::Modify:
              CHECK_MESSAGE(bool(frame_slot || area_slot), where);
              break;
            case ir::OperandMode::ReadRun: case ir::OperandMode::WriteRun: case ir::OperandMode::Frame:
            case ir::OperandMode::Position:
              CHECK_MESSAGE(bool(frame_slot || v == 0 || (v >= ir::kScratch && v - ir::kScratch <= f.scratch_slots)), where);
              break;
            case ir::OperandMode::Constant: break;
          }
          // the KINDS column against the slot's kind: an int operand is an int, bool, list or
          // iterator slot, a num operand a num slot (a run's first slot: its cells may differ)
          ir::ValueKind kind = ir::op_kind(in.op, i);
          bool single = m == ir::OperandMode::Read || m == ir::OperandMode::Write || m == ir::OperandMode::Modify;
          if (single && frame_slot && kind == ir::ValueKind::Num) CHECK_MESSAGE(f.slots[v] == ir::SlotKind::Num, where);
          if (single && frame_slot && kind == ir::ValueKind::Int)
            CHECK_MESSAGE(bool(f.slots[v] == ir::SlotKind::Int || f.slots[v] == ir::SlotKind::Bool ||
                               f.slots[v] == ir::SlotKind::List || f.slots[v] == ir::SlotKind::Iter),
                          where);
          // a slot of the frame is written only through a write mode
          if (in.op == ir::Op::CONST || in.op == ir::Op::MOVE) CHECK_MESSAGE(bool(i != 0 || m == ir::OperandMode::Write), where);
        }
}

TEST_CASE("ir: the operand and kinds columns of ops.def agree with every lowered example") {
  int programs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(PURE_EXAMPLES_DIR)) {
    if (entry.path().extension() != ".pure") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    test::Compiled c(text.str());
    if (!c.ok()) continue;  // the examples of compile errors
    check_operand_modes(ir::lower_module(c.checked, "t.pure"), entry.path().filename().string());
    ++programs;
  }
  CHECK(programs > 30);
  // the ops whose operands are not all slots
  CHECK(ir::op_mode(ir::Op::JLT_INT_K, 2) == ir::OperandMode::Constant);
  CHECK(ir::op_mode(ir::Op::BUILTIN, 1) == ir::OperandMode::Constant);
  CHECK(ir::op_mode(ir::Op::ST_GET, 1) == ir::OperandMode::Constant);
  CHECK(ir::op_mode(ir::Op::RET, 2) == ir::OperandMode::Constant);
  CHECK(ir::op_mode(ir::Op::CALL, 0) == ir::OperandMode::Frame);
  CHECK(ir::op_is_slot(ir::Op::ADD_INT, 0));
  CHECK(!ir::op_is_slot(ir::Op::JOIN_TEXT, 2));
  CHECK(ir::op_kind(ir::Op::EQ_NUM, 0) == ir::ValueKind::Int);
  CHECK(ir::op_kind(ir::Op::EQ_NUM, 1) == ir::ValueKind::Num);
  CHECK(ir::op_kind(ir::Op::SEQ_GET, 0) == ir::ValueKind::Any);
  CHECK(ir::op_kind(ir::Op::CALL_INLINED, 0) == ir::ValueKind::None);
}

namespace {

// The masks of a function's ITER_SKIP instructions, in order.
std::vector<int64_t> skips(const ir::Function& f) {
  std::vector<int64_t> out;
  for (const ir::Block& b : f.blocks)
    for (const ir::Inst& in : b.insts)
      if (in.op == ir::Op::ITER_SKIP) out.push_back(in.imm);
  return out;
}

}  // namespace

TEST_CASE("ir: a loop over rows leaves the text fields its body never names unloaded (ITER_SKIP)") {
  // fields: w 0, i 1, q 2, d1 3, d2 4, data 5 (bits 8, 16 and 32 are the texts d1, d2 and data)
  ir::Program p = lower(R"(list stock by (w: int, i: int) { q: int, d1: text, d2: text, data: text }
fn show(r: stock.Row) -> text { return r.d1 }
query ints() -> int {
  var t = 0
  for r in stock[1] { t += r.q }
  return t
}
query some() -> text {
  var out = ""
  for r in stock[1].range(2, 5) { out += "{r.d2}/{r.data.len()}" }
  for r in stock { if r.q > 1 { out += r.d1 } }
  return out
}
query whole() -> text {
  var out = ""
  for r in stock { out += show(r) }
  for r in stock { out += "{r}" }
  for r in stock { out += r.d1 + r.d2 + r.data }
  return out
}
query nested() -> int {
  var t = 0
  for a in stock { for b in stock[a.w] { t += b.data.len() } }
  return t
}
fn main() { print(ints()) }
)");
  CHECK(skips(function(p, "ints")) == std::vector<int64_t>{8 | 16 | 32});
  CHECK(skips(function(p, "some")) == std::vector<int64_t>{8, 16 | 32});
  CHECK(skips(function(p, "whole")).empty());  // passed, printed whole, or every text named
  CHECK(skips(function(p, "nested")) == std::vector<int64_t>{8 | 16 | 32, 8 | 16});
  for (const ir::Function& f : p.functions) check_invariants(f);
}
