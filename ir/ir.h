// ir/ir.h — the typed control-flow graph: functions of basic blocks over virtual slots, with the
// loops found. Lowering (ir/lower.cpp) builds it from a checked module; the VM turns it into
// bytecode; the JITs compile exactly the blocks marked loop-bearing.
// Depends on frontend/frontend.h and runtime/store.h (column types).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "frontend/frontend.h"
#include "runtime/store.h"

namespace pure::ir {

enum class Op : uint16_t {
#define PURE_OP(name, flags, inverse, doc) name,
#include "ir/ops.def"
#undef PURE_OP
  Count,
  NONE = Count  // "no such op" in the INVERSE column
};
const char* op_name(Op op);
const char* op_doc(Op op);

// The FLAGS column of ir/ops.def.
namespace opf {
enum : uint8_t { none = 0, jump = 1, term = 2, fault = 4, step = 8, frame = 16, native = 32 };
}
// The A, B, C columns of ir/ops.def: what an operand is.
enum class OperandMode : uint8_t {
  Unused,     // _  always 0
  Read,       // r  a slot read
  Write,      // w  a slot written
  Modify,     // m  a slot read, then written
  ReadRun,    // R  a run of slots read (its length: see the op's doc)
  WriteRun,   // W  a run of slots written
  Frame,      // F  a callee's frame starts here: arguments read, results written, any slot from it up overwritten
  Position,   // p  a slot number that is neither read nor written
  Constant,   // k  not a slot (a count, a stored list's number, a descriptor, a loop id, a constant)
};
// The KINDS column of ir/ops.def: the kind of value in an operand.
enum class ValueKind : uint8_t {
  None,  // _  no value (not a slot, a position, a callee's frame)
  Int,   // i  an int or a bool, or a handle computed with (an event list, an iterator)
  Num,   // n  a num
  Any,   // x  any value the op only moves, stores or passes on
};
struct OpInfo {
  uint8_t flags;
  Op inverse;
  OperandMode mode[3];  // A, B, C
  ValueKind kind[3];    // A, B, C
};
namespace opf {  // the FLAGS and mode columns name the enumerators above unqualified
inline constexpr OperandMode _ = OperandMode::Unused, r = OperandMode::Read, w = OperandMode::Write,
                             m = OperandMode::Modify, R = OperandMode::ReadRun, W = OperandMode::WriteRun,
                             F = OperandMode::Frame, p = OperandMode::Position, k = OperandMode::Constant;
// One KINDS letter; a KINDS token of other than three letters does not compile (kinds_of).
constexpr ValueKind kind_of(char letter) {
  switch (letter) {
    case '_': return ValueKind::None;
    case 'i': return ValueKind::Int;
    case 'n': return ValueKind::Num;
    case 'x': return ValueKind::Any;
    default: throw "ir/ops.def: a KINDS letter is one of _ i n x";  // (a compile error in kOpInfo)
  }
}
struct Kinds {
  ValueKind k[3];
};
constexpr Kinds kinds_of(const char (&letters)[4]) { return {{kind_of(letters[0]), kind_of(letters[1]), kind_of(letters[2])}}; }
inline constexpr OpInfo kOpInfo[] = {
#define PURE_OP_ROW(name, flags, inverse, a, b, c, kinds, doc)                          \
  {static_cast<uint8_t>(flags), Op::inverse, {a, b, c},                                 \
   {kinds_of(#kinds).k[0], kinds_of(#kinds).k[1], kinds_of(#kinds).k[2]}},
#include "ir/ops.def"
#undef PURE_OP_ROW
};
}  // namespace opf
using opf::kOpInfo;
static_assert(sizeof(kOpInfo) / sizeof(kOpInfo[0]) == static_cast<size_t>(Op::Count));

constexpr uint8_t op_flags(Op op) { return kOpInfo[static_cast<size_t>(op)].flags; }
constexpr bool op_jumps(Op op) { return op_flags(op) & opf::jump; }          // IMM is a jump target
constexpr bool op_ends_block(Op op) { return op_flags(op) & opf::term; }     // JUMP, RET, FAIL
constexpr bool op_may_fault(Op op) { return op_flags(op) & opf::fault; }
constexpr bool op_spends_step(Op op) { return op_flags(op) & opf::step; }    // LOOP, CALL, ITER_NEXT
constexpr bool op_changes_frame(Op op) { return op_flags(op) & opf::frame; }  // CALL, RET
// What operand i (0 = A, 1 = B, 2 = C) of op is; op_is_slot: any slot mode (not _, k).
constexpr OperandMode op_mode(Op op, int i) { return kOpInfo[static_cast<size_t>(op)].mode[i]; }
constexpr bool op_is_slot(Op op, int i) {
  OperandMode m = op_mode(op, i);
  return m != OperandMode::Unused && m != OperandMode::Constant;
}
// What kind of value operand i of op holds (ValueKind::None: no value).
constexpr ValueKind op_kind(Op op, int i) { return kOpInfo[static_cast<size_t>(op)].kind[i]; }
// The KINDS column names a value exactly where the mode column names slots read or written.
constexpr bool op_kinds_agree_with_modes() {
  for (const OpInfo& info : kOpInfo)
    for (int i = 0; i < 3; ++i) {
      OperandMode m = info.mode[i];
      bool value = m == OperandMode::Read || m == OperandMode::Write || m == OperandMode::Modify ||
                   m == OperandMode::ReadRun || m == OperandMode::WriteRun;
      if (value != (info.kind[i] != ValueKind::None)) return false;
    }
  return true;
}
static_assert(op_kinds_agree_with_modes(), "ir/ops.def: a KINDS letter is _ exactly where the operand is no slot read or written");
// A conditional jump and its inverse; false (and inverse untouched) when op has none.
constexpr bool op_inverse(Op op, Op& inverse) {
  Op i = kOpInfo[static_cast<size_t>(op)].inverse;
  if (i == Op::NONE) return false;
  inverse = i;
  return true;
}

// Slot numbers at or above kScratch name the call area: the slots just past the end of the
// frame where arguments are placed for a call (they become the callee's first slots) and where
// results come back. kScratch + k is the k-th slot of that area.
inline constexpr uint32_t kScratch = 0x80000000u;

// The word in the first slot of a slice's operands (the SLICE_ ops in ops.def).
namespace slice_word {
inline constexpr int64_t kPrefixMask = 0xFF;  // key cells given, in the slots after the word
inline constexpr int64_t kBounded = 1 << 8;   // lo and hi follow the key cells
inline constexpr int64_t kReverse = 1 << 9;   // from the last row to the first
inline constexpr int64_t kStored = 1 << 10;   // B is a stored list's number, not a slot
}  // namespace slice_word
// SLICE_AGG's IMM & 0xFF.
enum class SliceAgg : uint8_t { Count, Sum, Min, Max };

// What a slot holds. Text and List slots own a counted reference (released when overwritten and
// when the frame ends). Call-area slots own nothing once a call has returned.
enum class SlotKind : uint8_t { Int, Num, Bool, Text, List, Iter };
bool slot_is_ref(SlotKind k);

struct Inst {
  Op op;
  uint32_t a = 0, b = 0, c = 0;
  int64_t imm = 0;
  Loc loc;
  uint32_t inlined = 0;  // leaf inlining (ir/inline.cpp): 1 + the inlined call it was copied from, else 0
};

struct Block {
  std::vector<Inst> insts;   // ends with a terminator: JUMP, RET or FAIL
  std::vector<int> succs;
  std::vector<int> preds;
  bool loop_header = false;
  bool loop_bearing = false;  // inside at least one loop
  int loop_depth = 0;
};

struct Loop {
  int header = 0;
  std::vector<int> back_edges;  // blocks that jump back to the header
  std::vector<int> blocks;      // every block of the loop, header first
};

// The shape of a list, shared by the VM's event lists and the store's schemas.
struct ListDesc {
  std::string name;                 // stored list name, or the type as written
  bool sequence = false;
  uint32_t key_count = 0;           // leading row columns that form the key
  std::vector<rt::ColType> cols;    // row columns, keys first
  std::vector<std::string> names;   // column names
  std::vector<uint64_t> defaults;   // default cell per non-key column (text: index into texts)
  bool all_defaults = false;        // every non-key column has a default
  std::string was;                  // a stored list: its former name (`list NAME was OLD`), or ""
  std::vector<std::string> was_names;  // a stored list: per column, its former name (`f: T was OLD`), or ""
  std::vector<std::vector<std::string>> members;  // per column: an enum column's members (its cells are indexes), or empty
  uint32_t width() const { return static_cast<uint32_t>(cols.size()); }
};

// A value's type as a host sees it (the frontend's Type, copied out so later layers need not
// know the checker): what a caller passes to an event or query and what a query returns.
struct ValueType {
  enum class Kind : uint8_t { Void, Int, Num, Bool, Text, Item, Seq, Keyed };
  Kind kind = Kind::Void;
  std::string name;                 // item type name; the type as written for lists
  std::vector<std::string> field_names;  // Item: its fields. Seq/Keyed: the row's columns
  std::vector<ValueType> fields;    // Item: field types. Seq of items / Keyed: column types
  uint32_t key_count = 0;           // Keyed: leading columns that form the key
  bool row_is_item = false;         // Seq: elements are items (else one scalar column)
  int desc = -1;                    // Seq/Keyed parameter or result: its descriptor (Program::lists)
  std::vector<std::string> members; // Int: an enum's members (JSON carries a member's name), else empty
  uint32_t width() const;           // frame slots a value takes (items: their fields', nested items flattened)
  const ValueType& slot(uint32_t k) const;  // Item: the scalar or list type in its slot k; else itself
};
ValueType value_type_of(const Type* t);
std::string value_type_name(const ValueType& t);  // as the user writes it

struct Function {
  std::string name;
  FuncKind kind = FuncKind::Function;
  Loc loc;
  uint32_t param_slots = 0;
  uint32_t result_slots = 0;
  std::vector<SlotKind> result_kinds;
  std::vector<std::string> param_names;
  std::vector<ValueType> param_types;
  ValueType result_type;             // Void when it returns nothing (an event's result goes into its outcome)
  std::vector<SlotKind> slots;       // one per virtual slot; virtual slot i is frame slot i
  uint32_t scratch_slots = 0;        // size of the call area (see kScratch)
  std::vector<std::string> slot_names;  // for dumps: the local a slot belongs to, or ""
  std::vector<Block> blocks;         // block 0 is the entry
  std::vector<Loop> loops;
  // Slots of literals computed once on entry for the loops (lower_exprs.cpp, constant(); ir/inline.cpp's
  // constants of inlined leaves): fresh slots, each written by its one CONST alone.
  std::vector<uint32_t> entry_constants;
};

// An implementation limit that lowering found (a function with too many slots): a compile error
// at a place in the source. A Program with any of these must not be loaded.
struct LimitError {
  Loc loc;
  std::string message;
  std::string hint;
};

struct Program {
  std::string path;
  std::vector<LimitError> errors;      // limits reached; empty for a program that can be loaded
  std::vector<Function> functions;
  std::vector<std::string> texts;      // text constants
  std::vector<ListDesc> lists;         // descriptors of event list types
  std::vector<ListDesc> stored;        // the module's stored lists, in declaration order
  int main = -1;
};

// Lowers a checked module (no diagnostics) into IR, finding loops in every function.
Program lower_module(const CheckedModule& module, const std::string& path);

// Recomputes successors/predecessors and loops of one function (ir/loops.cpp).
void analyze_loops(Function& f);

// The final layout every engine runs (ir/layout.cpp): threads jumps, rotates loops, finds the
// loops again on the rotated graph, orders the live blocks as greedy traces and inverts branches
// so the common path falls through. Returns the order of the live blocks; a block's last JUMP to
// the block after it in that order is left in place (the encoder drops it).
std::vector<int> layout_function(Function& f);

// The IR verifier (ir/verify.cpp): ok when f has every property a lowered function must have
// (blocks end with a terminator, jump targets exist, edges agree, loops are natural and each
// spends a step, ...), else the first problem found, as the Status's error. `lowered` = false
// skips the checks that need a real lowered function (hand-built graphs in tests). With `order` (layout_function's
// result) a block may end with a conditional jump and fall into the block laid out after it.
// assert_verified aborts on a problem in checked builds (PURE_CHECKS), else does nothing.
base::Status verify_function(const Function& f, bool lowered = true, const std::vector<int>* order = nullptr);
void assert_verified(const Function& f, const char* after, const std::vector<int>* order = nullptr);

// Leaf inlining (ir/inline.cpp), run by the VM's loader on its copy of each function before
// layout_function. A plain function owns no counted references and is not an event or query; a
// leaf is a small plain function without loops or calls. inline_leaves replaces the calls in f of
// functions i with leaf[i] set by CALL_INLINED and a copy of the callee's blocks, and returns the
// calls it inlined: copied instruction k carries Inst::inlined = 1 + the index of its call there.
struct InlinedCall {
  uint32_t callee;  // function index
  Loc call;         // where the call is, in the caller
};
bool is_plain(const Function& f);
bool is_leaf(const Function& f, bool plain);
std::vector<InlinedCall> inline_leaves(Function& f, const Program& program, const std::vector<char>& leaf);

// Human-readable IR, for `pure-run --dump-ir`.
std::string dump_ir(const Program& p);

}  // namespace pure::ir
