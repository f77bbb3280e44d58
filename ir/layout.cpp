// ir/layout.cpp — the final shape of a function's control flow, shared by every engine: jump
// threading, loop rotation, the loops found again on the rotated graph, greedy trace order and
// branch inversion. The bytecode encoder (vm/load.cpp) only numbers what this decides, so the
// interpreter and the JITs see one loop structure.
#include "ir/ir.h"

namespace pure::ir {

namespace {

// Loop rotation: a jump back to a loop header that is "straight-line work; if C go to EXIT; go to
// BODY" becomes a copy of that work and "if not C go to BODY; go to EXIT", so each iteration ends
// with one conditional jump instead of a jump plus the header's test.
void rotate_loops(Function& f) {
  for (auto& blk : f.blocks) {
    if (blk.insts.empty() || blk.insts.back().op != Op::JUMP) continue;
    const Block& head = f.blocks[blk.insts.back().imm];
    const auto& h = head.insts;
    Op inverse;
    if (!head.loop_header || &head == &blk || h.size() < 2 || h.size() > 6 || h.back().op != Op::JUMP ||
        !op_inverse(h[h.size() - 2].op, inverse))
      continue;
    bool plain = true;
    for (size_t i = 0; i + 2 < h.size(); ++i)
      plain = plain && !(op_flags(h[i].op) & (opf::jump | opf::frame)) && h[i].op != Op::BUILTIN;
    if (!plain) continue;
    std::vector<Inst> copy(h.begin(), h.end());
    Inst& cond = copy[copy.size() - 2];
    Inst& other = copy.back();
    // the copy's conditional jump must go back into the loop; its last jump leaves it
    if (f.blocks[cond.imm].loop_depth < head.loop_depth) {
      std::swap(cond.imm, other.imm);
      cond.op = inverse;
    }
    blk.insts.pop_back();
    blk.insts.insert(blk.insts.end(), copy.begin(), copy.end());
  }
}

void thread_jumps(Function& f) {
  auto final_target = [&](int64_t b) {
    for (int hops = 0; hops < 64; ++hops) {
      const auto& insts = f.blocks[b].insts;
      if (insts.size() != 1 || insts[0].op != Op::JUMP || insts[0].imm == b) break;
      b = insts[0].imm;
    }
    return b;
  };
  for (auto& blk : f.blocks)
    for (auto& in : blk.insts)
      if (op_jumps(in.op)) in.imm = final_target(in.imm);
}

std::vector<char> live_blocks(const Function& f) {
  size_t n = f.blocks.size();
  std::vector<char> live(n, 0);
  std::vector<int> work{0};
  live[0] = 1;
  while (!work.empty()) {
    int b = work.back();
    work.pop_back();
    const auto& insts = f.blocks[b].insts;
    std::vector<int> next;
    for (const auto& in : insts)
      if (op_jumps(in.op)) next.push_back(static_cast<int>(in.imm));
    if ((insts.empty() || !op_ends_block(insts.back().op)) && static_cast<size_t>(b) + 1 < n) next.push_back(b + 1);
    for (int t : next)
      if (!live[t]) {
        live[t] = 1;
        work.push_back(t);
      }
  }
  return live;
}

// Greedy traces: after a block, place the successor that stays deepest inside loops (ties: the
// conditional target, so the branch can be inverted and fall through into it); when a trace
// ends, go on with the first block not yet placed.
std::vector<int> trace_order(const Function& f, const std::vector<char>& live) {
  size_t n = f.blocks.size();
  std::vector<int> order;
  std::vector<char> placed(n, 0);
  for (size_t start = 0; start < n; ++start) {
    if (!live[start] || placed[start]) continue;
    int b = static_cast<int>(start);
    while (b >= 0 && !placed[b]) {
      placed[b] = 1;
      order.push_back(b);
      const auto& insts = f.blocks[b].insts;
      int next = -1;
      if (insts.size() >= 2 && insts.back().op == Op::JUMP && op_jumps(insts[insts.size() - 2].op)) {
        int t = static_cast<int>(insts[insts.size() - 2].imm), e = static_cast<int>(insts.back().imm);
        bool t_free = !placed[t], e_free = !placed[e];
        if (t_free && e_free) next = f.blocks[e].loop_depth > f.blocks[t].loop_depth ? e : t;
        else next = t_free ? t : e_free ? e : -1;
      } else if (!insts.empty() && insts.back().op == Op::JUMP) {
        int e = static_cast<int>(insts.back().imm);
        next = placed[e] ? -1 : e;
      } else if (!insts.empty() && !op_ends_block(insts.back().op)) {
        next = b + 1;  // falls through
      }
      b = next;
    }
  }
  return order;
}

// A conditional jump to the next laid-out block followed by a jump elsewhere becomes the
// opposite conditional jump, so the common path falls through.
void invert_branches(Function& f, const std::vector<int>& order) {
  for (size_t i = 0; i + 1 < order.size(); ++i) {
    auto& insts = f.blocks[order[i]].insts;
    if (insts.size() < 2 || insts.back().op != Op::JUMP) continue;
    Inst& cond = insts[insts.size() - 2];
    if (cond.imm != order[i + 1]) continue;
    Op inverse;
    if (!op_inverse(cond.op, inverse)) continue;
    cond.op = inverse;
    cond.imm = insts.back().imm;
    insts.pop_back();
  }
}

}  // namespace

std::vector<int> layout_function(Function& f) {
  thread_jumps(f);
  rotate_loops(f);
  // Loops as the bytecode will have them: after rotation a back edge targets the loop's body, so
  // the headers (and the blocks each loop holds) are found again on the rotated graph.
  analyze_loops(f);
  std::vector<int> order = trace_order(f, live_blocks(f));
  invert_branches(f, order);
  assert_verified(f, "layout", &order);
  return order;
}

}  // namespace pure::ir
