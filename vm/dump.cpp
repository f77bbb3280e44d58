// vm/dump.cpp — bytecode listing for `pure-run --dump-bytecode`.
#include <cstdio>

#include "vm/bytecode.h"

namespace pure::vm {

std::string dump_bytecode(const Program& p) {
  std::string out;
  char buf[256];
  for (size_t i = 0; i < p.functions.size(); ++i) {
    const Function& f = p.functions[i];
    std::snprintf(buf, sizeof buf, "function #%zu %s: %u slots (%u params, %u results), call area %u\n", i, f.name.c_str(),
                  f.frame_slots, f.param_slots, f.result_slots, f.call_area);
    out += buf;
    auto list = [](const std::vector<uint32_t>& v) {
      std::string r;
      for (uint32_t x : v) r += (r.empty() ? "" : " ") + std::to_string(x);
      return r.empty() ? std::string("-") : r;
    };
    for (size_t l = 0; l < f.loops.size(); ++l) {
      const LoopInfo& L = f.loops[l];
      out += "  ; loop " + std::to_string(l) + ": header block " + std::to_string(L.header) + ", blocks " + list(L.blocks) +
             ", latches " + list(L.latches) + ", exits " + list(L.exits) +
             (L.parent >= 0 ? ", inside loop " + std::to_string(L.parent) : "") + "\n";
    }
    size_t block = 0;
    for (size_t pc = 0; pc < f.code.size(); ++pc) {
      while (block < f.blocks.size() && f.blocks[block].start_pc == pc && f.blocks[block].end_pc > pc) {
        const BlockInfo& b = f.blocks[block];
        std::snprintf(buf, sizeof buf, "  ; block %zu%s%s", block, b.loop_header ? " loop-header" : "", b.loop_bearing ? " loop-bearing" : "");
        out += buf;
        if (b.loop >= 0) out += " (loop " + std::to_string(b.loop) + ")";
        out += " ->";
        for (uint32_t t : b.succs) out += " " + std::to_string(t);
        out += "\n";
        ++block;
      }
      while (block < f.blocks.size() && f.blocks[block].end_pc <= pc) ++block;
      const Instr& in = f.code[pc];
      bool jumps = ir::op_jumps(in.op);
      std::snprintf(buf, sizeof buf, "  %4zu  %-14s %5u %5u %5u  %s%lld   ; line %u", pc, ir::op_name(in.op), in.a, in.b, in.c,
                    jumps ? "-> " : "", static_cast<long long>(jumps ? static_cast<int64_t>(pc) + in.imm : in.imm), f.locs[pc].line);
      out += buf;
      if (const Function::InlinedCall* call = f.inlined_call(static_cast<uint32_t>(pc)))
        out += " of " + p.functions[call->callee].name + ", inlined at line " + std::to_string(call->call.line);
      out += "\n";
    }
  }
  return out;
}

}  // namespace pure::vm
