// vm/load.cpp — turns IR into bytecode: lays out blocks, resolves jumps to relative offsets,
// places the call area after the frame, and builds list shapes and text constants.
#include <cstring>

#include "vm/bytecode.h"

namespace pure::vm {

// Fixed text constants that instructions use directly.
constexpr int kFixedTexts = 3;  // "false", "true", ""

Program::~Program() {
  shapes.clear();
  stored_shapes.clear();
  for (rt::Text* t : texts) rt::text_store_release(t);
}

static rt::Text* constant_text(const std::string& s) {
  rt::Text* t = rt::text_new(s);
  t->flags = rt::kTextStored;  // shared and immortal while the program lives: VM counting skips it
  return t;
}

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

// Block layout. Jumps to blocks that only jump on go straight to the final target; blocks no
// longer reached are left out; then a conditional jump to the next laid-out block followed by a
// jump elsewhere becomes the opposite conditional jump, so the common path falls through.
static bool is_terminator(Op op) { return op == Op::JUMP || op == Op::RET || op == Op::FAIL; }

static bool invert(Op op, Op& inverse) {
  switch (op) {
    case Op::JLT_INT: inverse = Op::JGE_INT; return true;
    case Op::JGE_INT: inverse = Op::JLT_INT; return true;
    case Op::JLT_INT_K: inverse = Op::JGE_INT_K; return true;
    case Op::JGE_INT_K: inverse = Op::JLT_INT_K; return true;
    case Op::JUMP_IF: inverse = Op::JUMP_IFNOT; return true;
    case Op::JUMP_IFNOT: inverse = Op::JUMP_IF; return true;
    case Op::JEQ_INT: inverse = Op::JNE_INT; return true;
    case Op::JNE_INT: inverse = Op::JEQ_INT; return true;
    case Op::JLT_NUM: inverse = Op::JNLT_NUM; return true;
    case Op::JNLT_NUM: inverse = Op::JLT_NUM; return true;
    case Op::JLE_NUM: inverse = Op::JNLE_NUM; return true;
    case Op::JNLE_NUM: inverse = Op::JLE_NUM; return true;
    default: return false;
  }
}

// Loop rotation: a jump back to a loop header that is "straight-line work; if C go to EXIT; go to
// BODY" becomes a copy of that work and "if not C go to BODY; go to EXIT", so each iteration ends
// with one conditional jump instead of a jump plus the header's test.
static void rotate_loops(ir::Function& f) {
  for (auto& blk : f.blocks) {
    if (blk.insts.empty() || blk.insts.back().op != Op::JUMP) continue;
    const ir::Block& head = f.blocks[blk.insts.back().imm];
    const auto& h = head.insts;
    Op inverse;
    if (!head.loop_header || &head == &blk || h.size() < 2 || h.size() > 6 || h.back().op != Op::JUMP ||
        !invert(h[h.size() - 2].op, inverse))
      continue;
    bool plain = true;
    for (size_t i = 0; i + 2 < h.size(); ++i) plain = plain && !ir::op_jumps(h[i].op) && h[i].op != Op::CALL && h[i].op != Op::BUILTIN;
    if (!plain) continue;
    std::vector<ir::Inst> copy(h.begin(), h.end());
    ir::Inst& cond = copy[copy.size() - 2];
    ir::Inst& other = copy.back();
    // the copy's conditional jump must go back into the loop; its last jump leaves it
    if (f.blocks[cond.imm].loop_depth < head.loop_depth) {
      std::swap(cond.imm, other.imm);
      cond.op = inverse;
    }
    blk.insts.pop_back();
    blk.insts.insert(blk.insts.end(), copy.begin(), copy.end());
  }
}

static std::vector<int> layout_blocks(ir::Function& f) {
  size_t n = f.blocks.size();
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
      if (ir::op_jumps(in.op)) in.imm = final_target(in.imm);
  rotate_loops(f);
  // Loops as the bytecode will have them: after rotation a back edge targets the loop's body, so
  // the headers (and the blocks each loop holds) are found again on the rotated graph.
  ir::analyze_loops(f);
  std::vector<char> live(n, 0);
  std::vector<int> work{0};
  live[0] = 1;
  while (!work.empty()) {
    int b = work.back();
    work.pop_back();
    const auto& insts = f.blocks[b].insts;
    std::vector<int> next;
    for (const auto& in : insts)
      if (ir::op_jumps(in.op)) next.push_back(static_cast<int>(in.imm));
    if ((insts.empty() || !is_terminator(insts.back().op)) && static_cast<size_t>(b) + 1 < n) next.push_back(b + 1);
    for (int t : next)
      if (!live[t]) {
        live[t] = 1;
        work.push_back(t);
      }
  }
  // Greedy traces: after a block, place the successor that stays deepest inside loops (ties: the
  // conditional target, so the branch can be inverted and fall through into it); when a trace
  // ends, go on with the first block not yet placed.
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
      if (insts.size() >= 2 && insts.back().op == Op::JUMP && ir::op_jumps(insts[insts.size() - 2].op)) {
        int t = static_cast<int>(insts[insts.size() - 2].imm), e = static_cast<int>(insts.back().imm);
        bool t_free = !placed[t], e_free = !placed[e];
        if (t_free && e_free) next = f.blocks[e].loop_depth > f.blocks[t].loop_depth ? e : t;
        else next = t_free ? t : e_free ? e : -1;
      } else if (!insts.empty() && insts.back().op == Op::JUMP) {
        int e = static_cast<int>(insts.back().imm);
        next = placed[e] ? -1 : e;
      } else if (!insts.empty() && !is_terminator(insts.back().op)) {
        next = b + 1;  // falls through
      }
      b = next;
    }
  }
  for (size_t i = 0; i + 1 < order.size(); ++i) {
    auto& insts = f.blocks[order[i]].insts;
    if (insts.size() < 2 || insts.back().op != Op::JUMP) continue;
    ir::Inst& cond = insts[insts.size() - 2];
    if (cond.imm != order[i + 1]) continue;
    Op inverse;
    if (!invert(cond.op, inverse)) continue;
    cond.op = inverse;
    cond.imm = insts.back().imm;
    insts.pop_back();
  }
  return order;
}

static bool load_function(const ir::Function& original, Function& out, std::string& error) {
  ir::Function f = original;
  std::vector<int> order = layout_blocks(f);
  out.name = f.name;
  out.kind = f.kind;
  out.line = f.loc.line;
  size_t frame = f.slots.size();
  if (frame + f.scratch_slots > 60000 || f.param_slots > 60000) {
    error = "function '" + f.name + "' is too large (" + std::to_string(frame) + " slots; the limit is 60000)";
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
  for (int b : order) {
    const ir::Block& blk = f.blocks[b];
    uint32_t block_start = static_cast<uint32_t>(out.code.size());
    for (size_t i = 0; i < blk.insts.size(); ++i) {
      if (is_fallthrough(b, i)) continue;
      const ir::Inst& in = blk.insts[i];
      bool c_is_constant = in.op == Op::JLT_INT_K || in.op == Op::JGE_INT_K;
      Instr ins{in.op, slot(in.a), slot(in.b), c_is_constant ? static_cast<uint16_t>(in.c) : slot(in.c), in.imm};
      uint32_t here = static_cast<uint32_t>(out.code.size());
      if (ir::op_jumps(in.op)) ins.imm = static_cast<int64_t>(start[in.imm]) - here;
      if (in.op == Op::CONST_TEXT) ins.imm += kFixedTexts;
      if (in.op == Op::MOVE_REF || in.op == Op::TAKE_REF) {
        ir::SlotKind k = in.a < ir::kScratch ? kind_of(in.a) : kind_of(in.b);
        ins.imm = (k == ir::SlotKind::List ? 1 : 0) | (in.a >= ir::kScratch ? 2 : 0);
      }
      out.code.push_back(ins);
      out.locs.push_back(in.loc);
    }
    if (out.code.size() > block_start)  // a block that was only a dropped jump leaves no trace
      out.blocks.push_back({block_start, static_cast<uint32_t>(out.code.size()), blk.loop_header, blk.loop_bearing});
  }
  out.stack_need = static_cast<uint32_t>(frame) + f.scratch_slots;
  out.plain = out.kind == FuncKind::Function && out.text_slots.empty() && out.list_slots.empty();
  for (uint8_t k : out.result_kind) out.plain = out.plain && k == 0;
  if (out.code.empty()) {
    out.code.push_back(Instr{Op::RET, 0, 0, 0, 0});
    out.locs.push_back(f.loc);
  }
  return true;
}

std::unique_ptr<Program> load_program(const ir::Program& ir, std::string& error) {
  auto p = std::make_unique<Program>();
  p->path = ir.path;
  p->main = ir.main;
  for (const char* fixed : {"false", "true", ""}) p->texts.push_back(constant_text(fixed));
  for (const std::string& t : ir.texts) p->texts.push_back(constant_text(t));
  for (const ir::ListDesc& d : ir.lists) {
    p->shapes.push_back(make_shape(d, *p));
    p->shape_names.push_back(d.name);
    p->shape_columns.push_back(d.names);
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
  for (size_t i = 0; i < ir.functions.size(); ++i)
    if (!load_function(ir.functions[i], p->functions[i], error)) return nullptr;
  return p;
}

}  // namespace pure::vm
