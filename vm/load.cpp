// vm/load.cpp — turns IR into bytecode: lays out blocks, resolves jumps to relative offsets,
// places the call area after the frame, and builds list shapes and text constants.
#include <algorithm>
#include <cstring>

#include "base/assert.h"
#include "base/limits.h"
#include "vm/bytecode.h"

namespace pure::vm {

// Fixed text constants that instructions use directly.
constexpr int kFixedTexts = 3;  // "false", "true", ""

Program::~Program() {
  shapes.clear();
  stored_shapes.clear();
  for (rt::Text* t : texts) rt::text_free_immortal(t);
}

// Shared and immortal while the program lives: no thread ever counts it.
static rt::Text* constant_text(const std::string& s) { return rt::text_new_immortal(s); }

static std::unique_ptr<rt::ListShape> make_shape(const ir::ListDesc& d, const Program& p) {
  auto shape = std::make_unique<rt::ListShape>();
  shape->sequence = d.sequence;
  shape->key_count = d.key_count;
  shape->cols = d.cols;
  shape->all_defaults = d.all_defaults;
  for (size_t i = 0; i < d.defaults.size(); ++i) {
    uint64_t v = d.defaults[i];
    if (d.cols[d.key_count + i] == rt::ColType::Text) v = reinterpret_cast<uint64_t>(p.texts[kFixedTexts + v]);
    shape->defaults.push_back(v);
  }
  shape->finish();
  return shape;
}

// The block index holding pc (blocks tile the code).
static uint32_t block_at(const Function& out, uint32_t pc) {
  size_t lo = 0, hi = out.blocks.size();
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    (out.blocks[mid].start_pc <= pc ? lo : hi) = mid;
  }
  return static_cast<uint32_t>(lo);
}

// ITER_NEXT's C while loading, before load_program turns ids into program-wide indexes: no loop.
constexpr uint16_t kNoLocalLoop = 0xFFFF;

// Successors of each bytecode block, the IR's loops in bytecode blocks, and each step-spending
// instruction tagged with its loop's id (LOOP: IMM, ITER_NEXT: C; -1 / kNoLocalLoop when it guards
// no loop, as the copy of a rotated loop's test in front of the loop does). load_program then
// turns the ids into program-wide indexes (LOOP: A and B, ITER_NEXT: C).
static void link_loops(const ir::Function& f, const std::vector<uint32_t>& start, const std::vector<char>& emitted,
                       Function& out) {
  for (size_t k = 0; k < out.blocks.size(); ++k) {
    BlockInfo& b = out.blocks[k];
    for (uint32_t pc = b.start_pc; pc < b.end_pc; ++pc)
      if (ir::op_jumps(out.code[pc].op)) {
        uint32_t t = block_at(out, static_cast<uint32_t>(pc + out.code[pc].imm));
        if (std::find(b.succs.begin(), b.succs.end(), t) == b.succs.end()) b.succs.push_back(t);
      }
    if (!ir::op_ends_block(out.code[b.end_pc - 1].op) && k + 1 < out.blocks.size()) {
      uint32_t t = static_cast<uint32_t>(k + 1);
      if (std::find(b.succs.begin(), b.succs.end(), t) == b.succs.end()) b.succs.push_back(t);
    }
  }
  out.loops = std::vector<LoopInfo>(f.loops.size());
  std::vector<std::vector<char>> member(f.loops.size(), std::vector<char>(out.blocks.size(), 0));
  for (size_t l = 0; l < f.loops.size(); ++l) {
    const ir::Loop& il = f.loops[l];
    LoopInfo& L = out.loops[l];
    L.header = block_at(out, start[il.header]);
    for (int b : il.blocks)
      if (emitted[b]) member[l][block_at(out, start[b])] = 1;
    for (int b : il.back_edges)
      if (emitted[b]) L.latches.push_back(block_at(out, start[b]));
    std::sort(L.latches.begin(), L.latches.end());
    L.latches.erase(std::unique(L.latches.begin(), L.latches.end()), L.latches.end());
    for (uint32_t k = 0; k < out.blocks.size(); ++k)
      if (member[l][k]) L.blocks.push_back(k);
  }
  // nesting: the parent is the smallest other loop that holds the header
  for (size_t l = 0; l < out.loops.size(); ++l) {
    LoopInfo& L = out.loops[l];
    for (size_t m = 0; m < out.loops.size(); ++m)
      if (m != l && member[m][L.header] && out.loops[m].blocks.size() > L.blocks.size() &&
          (L.parent < 0 || out.loops[m].blocks.size() < out.loops[L.parent].blocks.size()))
        L.parent = static_cast<int32_t>(m);
  }
  for (LoopInfo& L : out.loops) {
    for (int32_t p = L.parent; p >= 0; p = out.loops[p].parent) ++L.depth;
    for (uint32_t b : L.blocks) {
      BlockInfo& bi = out.blocks[b];
      if (bi.loop < 0 || out.loops[bi.loop].depth < L.depth) bi.loop = static_cast<int32_t>(&L - out.loops.data());
      for (uint32_t t : bi.succs)
        if (!member[&L - out.loops.data()][t] && std::find(L.exits.begin(), L.exits.end(), t) == L.exits.end())
          L.exits.push_back(t);
    }
    std::sort(L.exits.begin(), L.exits.end());
  }
  for (size_t k = 0; k < out.blocks.size(); ++k) {
    const BlockInfo& b = out.blocks[k];
    for (uint32_t pc = b.start_pc; pc < b.end_pc; ++pc) {
      Instr& in = out.code[pc];
      if (in.op != Op::LOOP && in.op != Op::ITER_NEXT) continue;
      // the innermost loop this block heads or closes
      int32_t id = -1;
      for (int32_t l = b.loop; l >= 0 && id < 0; l = out.loops[l].parent) {
        const LoopInfo& L = out.loops[l];
        if (L.header == k || std::binary_search(L.latches.begin(), L.latches.end(), static_cast<uint32_t>(k))) id = l;
      }
      if (in.op == Op::LOOP) in.imm = id;
      else in.c = id < 0 ? kNoLocalLoop : static_cast<uint16_t>(id);
    }
  }
}

// Calls of plain functions: "MOVE call+0 <- x; MOVE call+1 <- y; CALL f; TAKE d <- call+0"
// becomes one CALL_PLAIN that copies x and y into the callee's frame and returns the result
// straight to d (ir/ops.def). Three dispatches fewer per call; the call area of a plain call
// holds no references, so the TAKE's clearing of it is not needed.
static void fuse_plain_calls(ir::Function& f, const ir::Program& program, const std::vector<char>& plain) {
  for (ir::Block& blk : f.blocks) {
    std::vector<ir::Inst> out;
    out.reserve(blk.insts.size());
    for (size_t i = 0; i < blk.insts.size(); ++i) {
      const ir::Inst& in = blk.insts[i];
      if (in.op != Op::CALL || !plain[in.imm] || in.a != ir::kScratch) {
        out.push_back(in);
        continue;
      }
      const ir::Function& callee = program.functions[in.imm];
      ir::Inst call = in;
      call.op = Op::CALL_PLAIN;
      uint64_t imm = static_cast<uint32_t>(in.imm);
      uint32_t n = callee.param_slots;
      auto moves_arg = [&](size_t from_end, uint32_t k) {
        if (out.size() < from_end) return false;
        const ir::Inst& m = out[out.size() - from_end];
        return m.op == Op::MOVE && m.a == ir::kScratch + k && m.b < ir::kScratch;
      };
      if ((n == 1 && moves_arg(1, 0)) || (n == 2 && moves_arg(2, 0) && moves_arg(1, 1))) {
        call.b = out[out.size() - n].b;
        call.c = n == 2 ? out.back().b : 0;
        out.resize(out.size() - n);
        imm |= uint64_t{n} << 32;
      }
      if (callee.result_slots == 1 && i + 1 < blk.insts.size() && blk.insts[i + 1].op == Op::TAKE &&
          blk.insts[i + 1].b == ir::kScratch && blk.insts[i + 1].a < ir::kScratch) {
        imm |= (uint64_t{1} << 34) | (uint64_t{blk.insts[i + 1].a} << 48);
        ++i;
      }
      call.imm = static_cast<int64_t>(imm);
      out.push_back(call);
    }
    blk.insts = std::move(out);
  }
}

static bool load_function(const ir::Function& original, const ir::Program& program, const std::vector<char>& plain,
                          const std::vector<char>& leaf, Function& out, std::string& error) {
  ir::Function f = original;
  const bool plain_self = ir::is_plain(original);
  const uint32_t lowered_need = static_cast<uint32_t>(f.slots.size()) + f.scratch_slots;
  out.inlined = ir::inline_leaves(f, program, leaf);
  std::vector<int> order = ir::layout_function(f);
  fuse_plain_calls(f, program, plain);
  out.name = f.name;
  out.kind = f.kind;
  out.line = f.loc.line;
  size_t frame = f.slots.size();
  if (frame + f.scratch_slots > limits::kFrameSlots || f.param_slots > limits::kFrameSlots) {
    error = "function '" + f.name + "' is too large (" + std::to_string(frame + f.scratch_slots) + " slots; the limit is " +
            std::to_string(limits::kFrameSlots) + ")";
    return false;
  }
  if (f.loops.size() > limits::kLoopsPerFunction) {
    error = "function '" + f.name + "' has too many loops (" + std::to_string(f.loops.size()) + "; the limit is " +
            std::to_string(limits::kLoopsPerFunction) + ")";
    return false;
  }
  out.param_slots = static_cast<uint16_t>(f.param_slots);
  out.result_slots = static_cast<uint16_t>(f.result_slots);
  out.frame_slots = static_cast<uint16_t>(frame);
  out.call_area = static_cast<uint16_t>(f.scratch_slots);
  for (size_t i = 0; i < frame; ++i) {
    if (f.slots[i] == ir::SlotKind::Text) out.text_slots.push_back(static_cast<uint16_t>(i));
    if (f.slots[i] == ir::SlotKind::List) out.list_slots.push_back(static_cast<uint16_t>(i));
  }
  for (ir::SlotKind k : f.result_kinds) out.result_kind.push_back(k == ir::SlotKind::Text ? 1 : k == ir::SlotKind::List ? 2 : 0);

  // A JUMP to the block laid out next is dropped.
  std::vector<int> next_in_layout(f.blocks.size(), -1);
  for (size_t i = 0; i + 1 < order.size(); ++i) next_in_layout[order[i]] = order[i + 1];
  auto is_fallthrough = [&](int b, size_t i) {
    const ir::Inst& in = f.blocks[b].insts[i];
    return in.op == Op::JUMP && i + 1 == f.blocks[b].insts.size() && in.imm == next_in_layout[b];
  };
  std::vector<uint32_t> start(f.blocks.size(), 0);
  uint32_t pc = 0;
  for (int b : order) {
    start[b] = pc;
    for (size_t i = 0; i < f.blocks[b].insts.size(); ++i)
      if (!is_fallthrough(b, i)) ++pc;
  }
  auto slot = [&](uint32_t s) -> uint16_t { return static_cast<uint16_t>(s >= ir::kScratch ? frame + (s - ir::kScratch) : s); };
  auto kind_of = [&](uint32_t s) { return s < ir::kScratch ? f.slots[s] : ir::SlotKind::Int; };
  std::vector<char> emitted(f.blocks.size(), 0);
  for (int b : order) {
    const ir::Block& blk = f.blocks[b];
    uint32_t block_start = static_cast<uint32_t>(out.code.size());
    for (size_t i = 0; i < blk.insts.size(); ++i) {
      if (is_fallthrough(b, i)) continue;
      const ir::Inst& in = blk.insts[i];
      auto operand = [&](int i, uint32_t v) { return ir::op_is_slot(in.op, i) ? slot(v) : static_cast<uint16_t>(v); };
      Instr ins{in.op, operand(0, in.a), operand(1, in.b), operand(2, in.c), in.imm};
      uint32_t here = static_cast<uint32_t>(out.code.size());
      if (ir::op_jumps(in.op)) ins.imm = static_cast<int64_t>(start[in.imm]) - here;
      if (in.op == Op::CONST_TEXT) ins.imm += kFixedTexts;
      if (in.op == Op::RET) ins.a = plain_self && in.c <= 1;  // the short return path (vm/exec.h)
      if (in.op == Op::CALL_INLINED) ins.b = static_cast<uint16_t>(ins.a + ins.c);  // where its frame would end
      if (in.op == Op::MOVE_REF || in.op == Op::TAKE_REF) {
        ir::SlotKind k = in.a < ir::kScratch ? kind_of(in.a) : kind_of(in.b);
        ins.imm = (k == ir::SlotKind::List ? 1 : 0) | (in.a >= ir::kScratch ? 2 : 0);
      }
      out.code.push_back(ins);
      out.locs.push_back(in.loc);
      if (!out.inlined.empty()) out.inlined_from.push_back(static_cast<uint16_t>(in.inlined));
    }
    emitted[b] = out.code.size() > block_start;
    if (emitted[b])  // a block that was only a dropped jump leaves no trace
      out.blocks.push_back({block_start, static_cast<uint32_t>(out.code.size()), blk.loop_header, blk.loop_bearing});
  }
  if (out.code.empty()) {
    out.code.push_back(Instr{Op::RET, 0, 0, 0, 0});
    out.locs.push_back(f.loc);
    if (!out.inlined.empty()) out.inlined_from.push_back(0);
    out.blocks.push_back({0, 1});
  }
  link_loops(f, start, emitted, out);
  // the bytecode's own invariants, at the boundary to every engine
  for (size_t k = 0; k < out.blocks.size(); ++k) {
    PURE_ASSERT(out.blocks[k].start_pc < out.blocks[k].end_pc);
    PURE_ASSERT(out.blocks[k].start_pc == (k == 0 ? 0 : out.blocks[k - 1].end_pc));
  }
  PURE_ASSERT(!out.blocks.empty() && out.blocks.back().end_pc == out.code.size());
  for (size_t pc = 0; pc < out.code.size(); ++pc)
    if (ir::op_jumps(out.code[pc].op)) {
      uint32_t target = static_cast<uint32_t>(static_cast<int64_t>(pc) + out.code[pc].imm);
      PURE_ASSERT(target < out.code.size() && out.blocks[block_at(out, target)].start_pc == target);
    }
  for (const LoopInfo& L : out.loops) PURE_ASSERT(!L.blocks.empty() && !L.latches.empty() && L.header < out.blocks.size());
  out.param_names = f.param_names;
  out.param_types = f.param_types;
  out.result_type = f.result_type;
  // Entry constants: the literals the lowering and the inliner computed once on entry (their
  // slots are fresh), kept when the bytecode bears it out: one write to the slot in the whole
  // function (a single slot written or modified, or a plain call's result sent to it: ir/ops.def),
  // that write a CONST outside every loop, and the slot neither a parameter nor a counted one.
  if (!f.entry_constants.empty()) {
    const size_t n = static_cast<size_t>(frame) + f.scratch_slots + 1;
    std::vector<uint32_t> writes(n, 0), writer(n, 0);
    auto written = [&](uint32_t s, uint32_t pc) {
      if (s < n) {
        ++writes[s];
        writer[s] = pc;
      }
    };
    for (uint32_t pc = 0; pc < out.code.size(); ++pc) {
      const Instr& in = out.code[pc];
      const uint16_t operands[3] = {in.a, in.b, in.c};
      for (int i = 0; i < 3; ++i)
        if (ir::op_mode(in.op, i) == ir::OperandMode::Write || ir::op_mode(in.op, i) == ir::OperandMode::Modify)
          written(operands[i], pc);
      if (int32_t to = plain_call_result_slot(in); to >= 0) written(static_cast<uint32_t>(to), pc);
    }
    std::vector<bool> counted(n, false);
    for (uint16_t t : out.text_slots) counted[t] = true;
    for (uint16_t l : out.list_slots) counted[l] = true;
    for (uint32_t virtual_slot : f.entry_constants) {
      const uint16_t s = slot(virtual_slot);
      if (s >= n || s < f.param_slots || counted[s] || writes[s] != 1) continue;
      const Instr& in = out.code[writer[s]];
      if (in.op != Op::CONST || out.blocks[block_at(out, writer[s])].loop >= 0) continue;
      out.entry_constants.push_back({s, in.imm});
    }
  }
  out.stack_need = static_cast<uint32_t>(frame) + f.scratch_slots;
  out.overflow_need = lowered_need;
  PURE_ASSERT(out.overflow_need <= out.stack_need && out.stack_need - out.overflow_need <= limits::kInlineSlots);
  out.plain = plain_self;
  return true;
}

std::unique_ptr<Program> load_program(const ir::Program& ir, std::string& error, const LoadOptions& options) {
  auto p = std::make_unique<Program>();
  p->path = ir.path;
  p->main = ir.main;
  for (const char* fixed : {"false", "true", ""}) p->texts.push_back(constant_text(fixed));
  for (const std::string& t : ir.texts) p->texts.push_back(constant_text(t));
  for (const ir::ListDesc& d : ir.lists) {
    p->shapes.push_back(make_shape(d, *p));
    p->shape_names.push_back(d.name);
    p->shape_columns.push_back(d.names);
    p->shape_members.push_back(d.members);
  }
  for (const ir::ListDesc& d : ir.stored) {
    rt::ListSchema schema;
    schema.name = d.name;
    schema.is_sequence = d.sequence;
    schema.key.assign(d.cols.begin(), d.cols.begin() + d.key_count);
    schema.fields.assign(d.cols.begin() + d.key_count, d.cols.end());
    p->stored.push_back(schema);
    p->stored_shapes.push_back(make_shape(d, *p));
  }
  p->functions.resize(ir.functions.size());
  std::vector<char> plain(ir.functions.size());
  std::vector<char> leaf(ir.functions.size());
  for (size_t i = 0; i < ir.functions.size(); ++i) plain[i] = ir::is_plain(ir.functions[i]);
  for (size_t i = 0; i < ir.functions.size(); ++i) leaf[i] = options.inline_calls && ir::is_leaf(ir.functions[i], plain[i]);
  for (size_t i = 0; i < ir.functions.size(); ++i)
    if (!load_function(ir.functions[i], ir, plain, leaf, p->functions[i], error)) return nullptr;
  // one array of pass counters for all loops, from index 1 (0 is no loop's, parked for ever); each
  // LOOP carries its loop's index in A and B, each ITER_NEXT in C (kNoLoopIndex when it heads no
  // loop or the index does not fit), so that both reach the counter with one load and no test
  size_t loops = 0;
  for (const Function& f : p->functions) loops += f.loops.size();
  if (loops >= UINT32_MAX) {
    error = "too many loops in one program";
    return nullptr;
  }
  p->loop_hits = std::make_unique<std::atomic<uint32_t>[]>(loops + 1);
  p->loop_hits[kNoLoopIndex].store(kLoopParked, std::memory_order_relaxed);
  p->loop_count = static_cast<uint32_t>(loops);
  p->open_loops.store(static_cast<uint32_t>(loops), std::memory_order_relaxed);
  uint32_t next = kNoLoopIndex + 1;
  for (Function& f : p->functions) {
    uint32_t first = next;
    for (LoopInfo& L : f.loops) {
      L.index = next++;
      L.hits.at = &p->loop_hits[L.index];
    }
    for (Instr& in : f.code)
      if (in.op == Op::LOOP) {
        uint32_t index = in.imm >= 0 ? first + static_cast<uint32_t>(in.imm) : kNoLoopIndex;
        in.a = static_cast<uint16_t>(index & 0xFFFF);
        in.b = static_cast<uint16_t>(index >> 16);
      } else if (in.op == Op::ITER_NEXT) {
        PURE_ASSERT(in.c == kNoLocalLoop || in.c < f.loops.size());
        uint32_t index = in.c == kNoLocalLoop ? kNoLoopIndex : first + in.c;
        in.c = static_cast<uint16_t>(index <= 0xFFFF ? index : kNoLoopIndex);
      }
  }
  return p;
}

}  // namespace pure::vm
