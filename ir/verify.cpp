// ir/verify.cpp — the IR verifier: the properties every lowered (and laid-out) function must
// have. Run after lowering and after layout in checked builds (PURE_CHECKS), and by the tests.
#include <algorithm>

#include "base/assert.h"
#include "ir/ir.h"

namespace pure::ir {

namespace {

bool has(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::string where(const Function& f, size_t b) { return "function '" + f.name + "' block " + std::to_string(b) + ": "; }

base::Status fail(std::string problem) { return base::Status::failure(std::move(problem)); }

}  // namespace

base::Status verify_function(const Function& f, bool lowered, const std::vector<int>* order) {
  const int n = static_cast<int>(f.blocks.size());
  // after layout a block may end with a conditional jump and fall into the next laid-out block
  std::vector<int> falls_into(f.blocks.size(), -1);
  if (order)
    for (size_t i = 0; i + 1 < order->size(); ++i) falls_into[(*order)[i]] = (*order)[i + 1];
  if (n == 0) return fail("function '" + f.name + "' has no blocks");
  for (size_t b = 0; b < f.blocks.size(); ++b) {
    const Block& block = f.blocks[b];
    if (block.insts.empty()) return fail(where(f, b) + "empty");
    for (size_t i = 0; i < block.insts.size(); ++i) {
      const Inst& in = block.insts[i];
      if (in.op >= Op::Count) return fail(where(f, b) + "bad op");
      if (op_jumps(in.op) && (in.imm < 0 || in.imm >= n))
        return fail(where(f, b) + op_name(in.op) + " jumps to block " + std::to_string(in.imm) + " of " + std::to_string(n));
      if (op_ends_block(in.op) && i + 1 != block.insts.size()) return fail(where(f, b) + op_name(in.op) + " before the end");
    }
    if (!op_ends_block(block.insts.back().op)) {
      if (!order) return fail(where(f, b) + "does not end with JUMP, RET or FAIL");
      if (!op_jumps(block.insts.back().op) || falls_into[b] < 0 || !has(block.succs, falls_into[b]))
        return fail(where(f, b) + "falls through, but not into its successor laid out next");
    }
    for (int s : block.succs)
      if (s < 0 || s >= n || !has(f.blocks[s].preds, static_cast<int>(b))) return fail(where(f, b) + "successor without its edge back");
    for (int p : block.preds)
      if (p < 0 || p >= n || !has(f.blocks[p].succs, static_cast<int>(b))) return fail(where(f, b) + "predecessor without its edge");
    if (block.loop_bearing != (block.loop_depth > 0)) return fail(where(f, b) + "loop-bearing disagrees with its depth");
    if (block.loop_header && !block.loop_bearing) return fail(where(f, b) + "a loop header that is not loop-bearing");
  }
  int headers = 0;
  for (const Block& b : f.blocks) headers += b.loop_header;
  std::vector<int> depth(f.blocks.size(), 0);
  for (const Loop& loop : f.loops) {
    std::string l = "function '" + f.name + "' loop at block " + std::to_string(loop.header) + ": ";
    if (loop.blocks.empty() || loop.blocks[0] != loop.header) return fail(l + "its blocks do not start with the header");
    if (!f.blocks[loop.header].loop_header) return fail(l + "header not marked");
    if (loop.back_edges.empty()) return fail(l + "no back edge");
    for (int from : loop.back_edges)
      if (!has(loop.blocks, from) || !has(f.blocks[from].succs, loop.header)) return fail(l + "a back edge that does not close the loop");
    bool spends = false;
    for (int b : loop.blocks) {
      ++depth[b];
      // only the header is entered from outside the loop
      if (b != loop.header)
        for (int p : f.blocks[b].preds)
          if (!has(loop.blocks, p)) return fail(l + "block " + std::to_string(b) + " is entered from outside");
      for (const Inst& in : f.blocks[b].insts) spends = spends || op_spends_step(in.op);
    }
    // the budget's promise: every pass through a loop spends a step
    if (lowered && !spends) return fail(l + "spends no step");
    for (const Loop& other : f.loops)
      if (&other != &loop && other.header == loop.header) return fail(l + "two loops share a header");
  }
  if (headers != static_cast<int>(f.loops.size())) return fail("function '" + f.name + "': loop headers marked do not match the loops");
  for (size_t b = 0; b < f.blocks.size(); ++b)
    if (f.blocks[b].loop_depth != depth[b]) return fail(where(f, b) + "loop depth does not count the loops holding it");
  if (lowered) {
    if (f.param_slots > f.slots.size() || f.result_kinds.size() != f.result_slots) return fail("function '" + f.name + "': slot counts");
    if (f.param_names.size() != f.param_types.size()) return fail("function '" + f.name + "': parameter names and types differ");
  }
  return base::Status::success();
}

void assert_verified(const Function& f, const char* after, const std::vector<int>* order) {
#if PURE_CHECKS
  base::Status problem = verify_function(f, true, order);
  if (!problem.ok()) {
    std::string what = std::string("IR verifier after ") + after + ": " + problem.error;
    assert_failed(what.c_str(), __FILE__, __LINE__);
  }
#else
  (void)f;
  (void)after;
  (void)order;
#endif
}

}  // namespace pure::ir
