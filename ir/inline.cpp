// ir/inline.cpp — leaf inlining, an IR-to-IR pass the VM's loader runs before layout: the calls
// of small plain functions without calls or loops become a copy of the callee's blocks.
#include <algorithm>

#include "base/limits.h"
#include "ir/ir.h"

namespace pure::ir {

// A plain function owns no counted references and is not an event or query (see vm::Function::plain).
bool is_plain(const Function& f) {
  if (f.kind != FuncKind::Function) return false;
  for (SlotKind k : f.slots)
    if (k == SlotKind::Text || k == SlotKind::List) return false;
  for (SlotKind k : f.result_kinds)
    if (k == SlotKind::Text || k == SlotKind::List) return false;
  return true;
}

// ---- Leaf inlining ------------------------------------------------------------------------------
//
// A call of a leaf (a small plain function without calls or loops) becomes, in the IR before
// layout, CALL_INLINED (the call's step and stack check, exactly as the call would do them) and a
// copy of the callee's blocks, whose slots live where its frame would have been: callee slot k is
// call-area slot A+k. Each RET becomes moves of the results and a jump to the rest of the caller.
// Nothing a program can see changes:
//  * steps: CALL_INLINED spends the call's one step, at the call; the callee has no LOOP;
//  * faults: each copied instruction keeps the callee's source position and is tagged with its
//    inlined call (vm::Function::inlined), so a fault there shows the callee's frame on top of the
//    caller's (vm/driver.cpp); the call's own faults (the budget, a stack overflow) stay at the call;
//  * frames: no frame slot is added, so frames sit where they did. Calls still check the stack
//    for what the function needed before (vm::Function::overflow_need); the slots inlined code uses
//    past that (at most limits::kInlineSlots) are spare slots past the end of the slot stack.
// Three clean-ups make the copy cheaper than the call: an argument that is a plain copy of a
// caller slot the callee never writes is read from that slot (the copy goes); a result taken
// into a caller slot is written there by the callee's last instruction (the take goes); and a
// slot the callee only ever sets to one constant reads a caller slot set to that constant once,
// on entry: an existing constant of the caller's entry block, or, when the caller makes no
// other calls (nothing else then writes its call area), a new call-area slot set in its entry
// block.

constexpr size_t kLeafInstructions = 32;     // a leaf's instructions at most (its entry jump not counted)
constexpr uint32_t kLeafSlots = 64;          // a leaf's frame and call area at most
constexpr uint32_t kHoistedConstants = 64;   // new call-area constants per caller at most
constexpr size_t kInlinedPerCaller = 4096;   // instructions inlined into one function at most
static_assert(kLeafSlots + kHoistedConstants <= limits::kInlineSlots);

static uint32_t slots_of(const Function& f) { return static_cast<uint32_t>(f.slots.size()) + f.scratch_slots; }
static uint32_t local_slot(const Function& f, uint32_t s) {  // frame slot number of s
  return s >= kScratch ? static_cast<uint32_t>(f.slots.size()) + (s - kScratch) : s;
}
static uint32_t operand(const Inst& in, int i) { return i == 0 ? in.a : i == 1 ? in.b : in.c; }
static uint32_t& operand(Inst& in, int i) { return i == 0 ? in.a : i == 1 ? in.b : in.c; }

static bool writes(OperandMode m) {
  using M = OperandMode;
  return m == M::Write || m == M::Modify || m == M::WriteRun || m == M::Frame;
}
// Operands naming one slot that is read or written alone (not a run, a frame or a position).
static bool single(OperandMode m) {
  using M = OperandMode;
  return m == M::Read || m == M::Write || m == M::Modify;
}

static size_t instruction_count(const Function& f) {
  size_t n = 0;
  for (const Block& b : f.blocks) n += b.insts.size();
  return n;
}

// A leaf: plain, no loops, no calls, nothing that spends a step or changes the frame but RET.
bool is_leaf(const Function& f, bool plain) {
  if (!plain || !f.loops.empty() || slots_of(f) > kLeafSlots || instruction_count(f) > kLeafInstructions + 1) return false;
  bool returns = false;
  for (const Block& b : f.blocks)
    for (const Inst& in : b.insts) {
      if (in.op == Op::RET) {
        returns = true;
        continue;
      }
      if (op_spends_step(in.op) || op_changes_frame(in.op) || in.op == Op::FAIL || in.op == Op::CALL_INLINED) return false;
    }
  return returns;
}

// What the leaf does with each of its slots (frame slots, then its call area).
struct LeafSlots {
  std::vector<char> written;       // by any instruction
  std::vector<char> single_only;   // used only as a single-slot operand (never in a run or frame)
  std::vector<char> constant;      // every write is CONST with the value `value`
  std::vector<int64_t> value;
};

static LeafSlots leaf_slots(const Function& g) {
  uint32_t n = slots_of(g);
  LeafSlots u{std::vector<char>(n, 0), std::vector<char>(n, 1), std::vector<char>(n, 1), std::vector<int64_t>(n, 0)};
  std::vector<char> seen_const(n, 0);
  for (const Block& b : g.blocks)
    for (const Inst& in : b.insts)
      for (int i = 0; i < 3; ++i) {
        OperandMode m = op_mode(in.op, i);
        if (!op_is_slot(in.op, i)) continue;
        uint32_t k = local_slot(g, operand(in, i));
        if (!single(m)) {
          // a run or frame from k on: every slot from k up counts as written and not single
          for (uint32_t j = k; j < n; ++j) {
            u.single_only[j] = 0;
            u.constant[j] = 0;
            if (writes(m) || m == OperandMode::Frame) u.written[j] = 1;
          }
          continue;
        }
        if (!writes(m)) continue;
        u.written[k] = 1;
        if (in.op == Op::CONST && i == 0 && (!seen_const[k] || u.value[k] == in.imm)) {
          seen_const[k] = 1;
          u.value[k] = in.imm;
        } else {
          u.constant[k] = 0;
        }
      }
  for (uint32_t k = 0; k < n; ++k) u.constant[k] = u.constant[k] && seen_const[k] && u.single_only[k] && k >= g.param_slots;
  return u;
}

// The caller's constants: slots set once, in the entry block, by CONST, and never written again.
static std::vector<std::pair<int64_t, uint32_t>> entry_constants(const Function& f) {
  std::vector<int> writes_of(f.slots.size(), 0);
  std::vector<char> bad(f.slots.size(), 0);
  for (const Block& b : f.blocks)
    for (const Inst& in : b.insts)
      for (int i = 0; i < 3; ++i) {
        if (!op_is_slot(in.op, i) || !writes(op_mode(in.op, i)) || operand(in, i) >= kScratch) continue;
        uint32_t k = operand(in, i);
        if (!single(op_mode(in.op, i))) {
          for (uint32_t j = k; j < f.slots.size(); ++j) bad[j] = 1;
          continue;
        }
        ++writes_of[k];
        if (in.op != Op::CONST || &b != &f.blocks[0]) bad[k] = 1;
      }
  std::vector<std::pair<int64_t, uint32_t>> out;
  if (f.blocks.empty()) return out;
  for (const Inst& in : f.blocks[0].insts)
    if (in.op == Op::CONST && in.a < kScratch && in.a >= f.param_slots && writes_of[in.a] == 1 && !bad[in.a])
      out.push_back({in.imm, in.a});
  return out;
}

// Inlines the calls of leaves in f. leaf[i]: function i is a leaf. Returns the inlined calls, in
// the order of their tags (Inst::inlined - 1).
std::vector<InlinedCall> inline_leaves(Function& f, const Program& program, const std::vector<char>& leaf) {
  std::vector<InlinedCall> sites;
  const uint32_t lowered_area = f.scratch_slots;
  if (f.slots.size() + lowered_area + limits::kInlineSlots > limits::kFrameSlots) return sites;
  // Which calls: in block order, while the caller stays small enough. The others stay calls.
  size_t budget = kInlinedPerCaller;
  bool other_calls = false;
  uint32_t area = lowered_area;
  for (Block& b : f.blocks)
    for (Inst& in : b.insts) {
      if (in.op != Op::CALL) continue;
      const Function& g = program.functions[in.imm];
      size_t n = instruction_count(g);
      if (!leaf[in.imm] || in.a < kScratch || n > budget || sites.size() >= UINT16_MAX ||
          in.a - kScratch + slots_of(g) > lowered_area + kLeafSlots) {
        other_calls = true;
        continue;
      }
      budget -= n;
      in.op = Op::CALL_INLINED;  // expanded below
      in.c = slots_of(g);        // what the call would check the stack for (a leaf has no inlined calls)
      area = std::max(area, in.a - kScratch + slots_of(g));
      sites.push_back({static_cast<uint32_t>(in.imm), in.loc});
    }
  if (sites.empty()) return sites;
  std::vector<std::pair<int64_t, uint32_t>> caller_constants = entry_constants(f);
  std::vector<std::pair<int64_t, uint32_t>> hoisted;  // value, call-area slot (kScratch + k)
  auto constant_slot = [&](int64_t value) -> uint32_t {
    for (auto& [v, s] : caller_constants)
      if (v == value) return s;
    for (auto& [v, s] : hoisted)
      if (v == value) return s;
    if (other_calls || hoisted.size() >= kHoistedConstants) return UINT32_MAX;
    uint32_t s = kScratch + area + static_cast<uint32_t>(hoisted.size());
    hoisted.push_back({value, s});
    f.entry_constants.push_back(s);
    return s;
  };

  uint32_t tag = 0;
  std::vector<int> work;
  for (size_t b = 0; b < f.blocks.size(); ++b) work.push_back(static_cast<int>(b));
  for (size_t w = 0; w < work.size(); ++w) {
    int b = work[w];
    std::vector<Inst> insts = f.blocks[b].insts;
    size_t at = 0;
    while (at < insts.size() && insts[at].op != Op::CALL_INLINED) ++at;
    if (at == insts.size()) continue;
    Inst call = insts[at];
    const uint32_t callee = static_cast<uint32_t>(call.imm);
    const Function& g = program.functions[callee];
    const uint32_t base = call.a;  // kScratch + where the callee's frame would start
    const uint32_t n = slots_of(g);
    const uint32_t site = ++tag;
    LeafSlots use = leaf_slots(g);
    const uint32_t kNone = UINT32_MAX;
    std::vector<uint32_t> to(n, kNone);  // callee slot -> caller slot, when not base + k

    // Arguments: the instructions just before the call that each set one argument slot.
    size_t first = at;
    while (first > 0) {
      const Inst& in = insts[first - 1];
      bool sets_arg = op_mode(in.op, 0) == OperandMode::Write && in.a >= base && in.a < base + g.param_slots;
      for (int i = 1; i < 3; ++i) sets_arg = sets_arg && !writes(op_mode(in.op, i));
      if (!sets_arg) break;
      --first;
    }
    std::vector<char> drop(insts.size(), 0);
    for (size_t j = first; j < at; ++j) {
      const Inst& in = insts[j];
      uint32_t k = in.a - base;
      if (in.op != Op::MOVE || in.b >= kScratch || use.written[k] || !use.single_only[k]) continue;
      bool read_later = false;  // by a later argument's instruction
      for (size_t l = j + 1; l < at; ++l)
        for (int i = 1; i < 3; ++i)
          if (op_is_slot(insts[l].op, i) && operand(insts[l], i) <= in.a && (op_mode(insts[l].op, i) != OperandMode::Read ? true : operand(insts[l], i) == in.a))
            read_later = true;
      bool set_again = false;
      for (size_t l = j + 1; l < at; ++l) set_again = set_again || insts[l].a == in.a;
      if (read_later || set_again) continue;
      to[k] = in.b;
      drop[j] = 1;
    }
    // A result taken straight into a caller slot.
    uint32_t dest = kNone;
    bool take = at + 1 < insts.size() && insts[at + 1].op == Op::TAKE && insts[at + 1].b == base &&
                insts[at + 1].a < kScratch && g.result_slots == 1;
    if (take) dest = insts[at + 1].a;
    // Constants.
    for (uint32_t k = 0; k < n; ++k)
      if (use.constant[k] && to[k] == kNone) {
        uint32_t s = constant_slot(use.value[k]);
        if (s != kNone) to[k] = s;
      }
    auto rename = [&](uint32_t s) {
      uint32_t k = local_slot(g, s);
      return to[k] != kNone ? to[k] : base + k;
    };

    // The blocks: [.. call] -> callee copy -> continuation.
    const int copy0 = static_cast<int>(f.blocks.size());
    const int cont = copy0 + static_cast<int>(g.blocks.size());
    Block head;
    for (size_t j = 0; j < at; ++j)
      if (!drop[j]) head.insts.push_back(insts[j]);
    head.insts.push_back(call);
    head.insts.push_back(Inst{Op::JUMP, 0, 0, 0, copy0, call.loc});
    Block rest;
    rest.insts.assign(insts.begin() + static_cast<long>(at + 1 + (take ? 1 : 0)), insts.end());
    std::vector<Block> copies(g.blocks.size());
    for (size_t cb = 0; cb < g.blocks.size(); ++cb) {
      std::vector<Inst>& out = copies[cb].insts;
      for (const Inst& src : g.blocks[cb].insts) {
        Inst in = src;
        in.inlined = site;
        if (in.op == Op::CONST && to[local_slot(g, in.a)] != kNone) continue;  // set once, in the caller
        if (in.op == Op::RET) {
          uint32_t count = in.c;
          if (dest != kNone && count == 1) {
            uint32_t from = rename(in.b);
            Inst* last = out.empty() ? nullptr : &out.back();
            bool direct = last && from >= base && from < base + n && last->a == from &&
                          op_mode(last->op, 0) == OperandMode::Write && !writes(op_mode(last->op, 1)) &&
                          !writes(op_mode(last->op, 2));
            if (direct) last->a = dest;
            else if (from != dest) out.push_back(Inst{Op::MOVE, dest, from, 0, 0, in.loc, site});
          } else {
            for (uint32_t r = 0; r < count; ++r)
              if (rename(in.b + r) != base + r) out.push_back(Inst{Op::MOVE, base + r, rename(in.b + r), 0, 0, in.loc, site});
          }
          out.push_back(Inst{Op::JUMP, 0, 0, 0, cont, in.loc, site});
          continue;
        }
        for (int i = 0; i < 3; ++i)
          if (op_is_slot(in.op, i)) operand(in, i) = rename(operand(in, i));
        if (op_jumps(in.op)) in.imm += copy0;
        out.push_back(in);
      }
    }
    f.blocks[b].insts = std::move(head.insts);
    for (Block& c : copies) f.blocks.push_back(std::move(c));
    f.blocks.push_back(std::move(rest));
    work.push_back(cont);  // it may hold more calls
  }
  f.scratch_slots = area + static_cast<uint32_t>(hoisted.size());
  auto& entry = f.blocks[0].insts;
  for (auto& [value, s] : hoisted) entry.insert(entry.end() - 1, Inst{Op::CONST, s, 0, 0, value, f.loc});
  analyze_loops(f);
  return sites;
}

}  // namespace pure::ir
