// ir/loops.cpp — successors, dominators and natural loops of a function's blocks.
// A loop is found from each back edge (a jump to a block that dominates the jumping block);
// its blocks are those that reach the back edge without passing the header.
#include <algorithm>

#include "ir/ir.h"

namespace pure::ir {

bool slot_is_ref(SlotKind k) { return k == SlotKind::Text || k == SlotKind::List; }

static void link_blocks(Function& f) {
  for (Block& b : f.blocks) {
    b.succs.clear();
    b.preds.clear();
  }
  for (size_t i = 0; i < f.blocks.size(); ++i)
    for (const Inst& in : f.blocks[i].insts)
      if (op_jumps(in.op)) {
        int t = static_cast<int>(in.imm);
        auto& s = f.blocks[i].succs;
        if (std::find(s.begin(), s.end(), t) == s.end()) s.push_back(t);
      }
  for (size_t i = 0; i < f.blocks.size(); ++i)
    for (int s : f.blocks[i].succs) f.blocks[s].preds.push_back(static_cast<int>(i));
}

// Reverse post-order from the entry; unreachable blocks are left out.
static std::vector<int> reverse_post_order(const Function& f) {
  std::vector<int> order;
  std::vector<char> seen(f.blocks.size(), 0);
  std::vector<std::pair<int, size_t>> stack{{0, 0}};
  seen[0] = 1;
  while (!stack.empty()) {
    auto& [b, next] = stack.back();
    if (next < f.blocks[b].succs.size()) {
      int s = f.blocks[b].succs[next++];
      if (!seen[s]) {
        seen[s] = 1;
        stack.push_back({s, 0});
      }
    } else {
      order.push_back(b);
      stack.pop_back();
    }
  }
  std::reverse(order.begin(), order.end());
  return order;
}

// Immediate dominators by the iterative algorithm of Cooper, Harvey and Kennedy.
static std::vector<int> dominators(const Function& f, const std::vector<int>& rpo) {
  std::vector<int> index(f.blocks.size(), -1), idom(f.blocks.size(), -1);
  for (size_t i = 0; i < rpo.size(); ++i) index[rpo[i]] = static_cast<int>(i);
  idom[0] = 0;
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t i = 1; i < rpo.size(); ++i) {
      int b = rpo[i];
      int new_idom = -1;
      for (int p : f.blocks[b].preds) {
        if (idom[p] < 0) continue;
        if (new_idom < 0) {
          new_idom = p;
          continue;
        }
        int x = p, y = new_idom;
        while (x != y) {
          while (index[x] > index[y]) x = idom[x];
          while (index[y] > index[x]) y = idom[y];
        }
        new_idom = x;
      }
      if (new_idom >= 0 && idom[b] != new_idom) {
        idom[b] = new_idom;
        changed = true;
      }
    }
  }
  return idom;
}

static bool dominates(const std::vector<int>& idom, int a, int b) {
  while (true) {
    if (a == b) return true;
    if (b == 0 || idom[b] < 0) return false;
    b = idom[b];
  }
}

void analyze_loops(Function& f) {
  link_blocks(f);
  f.loops.clear();
  for (Block& b : f.blocks) {
    b.loop_header = false;
    b.loop_bearing = false;
    b.loop_depth = 0;
  }
  std::vector<int> rpo = reverse_post_order(f);
  std::vector<int> idom = dominators(f, rpo);
  for (int b : rpo) {
    for (int s : f.blocks[b].succs) {
      if (idom[s] < 0 || !dominates(idom, s, b)) continue;
      auto it = std::find_if(f.loops.begin(), f.loops.end(), [&](const Loop& l) { return l.header == s; });
      if (it == f.loops.end()) {
        f.loops.push_back(Loop{s, {}, {s}});
        it = f.loops.end() - 1;
      }
      it->back_edges.push_back(b);
      // walk backwards from the back edge to the header
      std::vector<int> work{b};
      while (!work.empty()) {
        int x = work.back();
        work.pop_back();
        if (std::find(it->blocks.begin(), it->blocks.end(), x) != it->blocks.end()) continue;
        it->blocks.push_back(x);
        for (int p : f.blocks[x].preds) work.push_back(p);
      }
    }
  }
  for (const Loop& l : f.loops) {
    f.blocks[l.header].loop_header = true;
    for (int b : l.blocks) {
      f.blocks[b].loop_bearing = true;
      ++f.blocks[b].loop_depth;
    }
  }
}

}  // namespace pure::ir
