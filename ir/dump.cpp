// ir/dump.cpp — prints the IR: blocks, their instructions, successors and loop structure.
#include <cstdio>

#include "ir/ir.h"

namespace pure::ir {

const char* op_name(Op op) {
  static const char* const names[] = {
#define PURE_OP(name, flags, inverse, doc) #name,
#include "ir/ops.def"
#undef PURE_OP
  };
  return op < Op::Count ? names[static_cast<int>(op)] : "?";
}

const char* op_doc(Op op) {
  static const char* const docs[] = {
#define PURE_OP(name, flags, inverse, doc) doc,
#include "ir/ops.def"
#undef PURE_OP
  };
  return op < Op::Count ? docs[static_cast<int>(op)] : "?";
}

static const char* kind_name(SlotKind k) {
  switch (k) {
    case SlotKind::Int: return "int";
    case SlotKind::Num: return "num";
    case SlotKind::Bool: return "bool";
    case SlotKind::Text: return "text";
    case SlotKind::List: return "list";
    case SlotKind::Iter: return "iter";
  }
  return "?";
}

std::string dump_ir(const Program& p) {
  std::string out;
  char buf[256];
  for (size_t i = 0; i < p.stored.size(); ++i) out += "stored list #" + std::to_string(i) + " " + p.stored[i].name + "\n";
  for (size_t fi = 0; fi < p.functions.size(); ++fi) {
    const Function& f = p.functions[fi];
    std::snprintf(buf, sizeof buf, "function #%zu %s: %zu slots + %u call-area slots, %u param slots, %u result slots, %zu loops\n",
                  fi, f.name.c_str(), f.slots.size(), f.scratch_slots, f.param_slots, f.result_slots, f.loops.size());
    out += buf;
    out += "  slots:";
    for (size_t s = 0; s < f.slots.size(); ++s) {
      out += " " + std::to_string(s) + ":" + kind_name(f.slots[s]);
      if (!f.slot_names[s].empty()) out += "(" + f.slot_names[s] + ")";
    }
    out += "\n";
    for (size_t li = 0; li < f.loops.size(); ++li) {
      const Loop& l = f.loops[li];
      out += "  loop " + std::to_string(li) + ": header b" + std::to_string(l.header) + ", blocks";
      for (int b : l.blocks) out += " b" + std::to_string(b);
      out += ", back edges from";
      for (int b : l.back_edges) out += " b" + std::to_string(b);
      out += "\n";
    }
    for (size_t bi = 0; bi < f.blocks.size(); ++bi) {
      const Block& b = f.blocks[bi];
      out += "  b" + std::to_string(bi) + ":";
      if (b.loop_header) out += " loop-header";
      if (b.loop_bearing) out += " loop-bearing depth=" + std::to_string(b.loop_depth);
      out += " preds[";
      for (size_t k = 0; k < b.preds.size(); ++k) out += (k ? " b" : "b") + std::to_string(b.preds[k]);
      out += "]\n";
      for (const Inst& in : b.insts) {
        auto slot = [](uint32_t s) { return s >= kScratch ? "call+" + std::to_string(s - kScratch) : std::to_string(s); };
        std::snprintf(buf, sizeof buf, "    %-14s a=%s b=%s c=%s %s%lld\n", op_name(in.op), slot(in.a).c_str(),
                      slot(in.b).c_str(), slot(in.c).c_str(), op_jumps(in.op) ? "-> b" : "imm=", static_cast<long long>(in.imm));
        out += buf;
      }
    }
  }
  return out;
}

}  // namespace pure::ir
