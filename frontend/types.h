// frontend/types.h — Pure's static types, interned so that equal types are equal pointers.
// Depends on nothing outside the standard library.
//
// Values of every type fit the 8-byte slots of a frame, except items, which are flattened into
// their fields' slots, one after another (an item type's fields are scalars, text, lists or
// items; a field that is a list is one counted list slot, a field that is an item is that
// item's slots in place, so `corner: Point` takes Point's two; an item holding a list or an item
// is never a list's row, and an item never holds itself, directly or through others).
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

namespace pure {

enum class TypeKind : uint8_t { Error, Void, Int, Num, Bool, Text, Item, Seq, Keyed };

struct Type;

struct FieldInfo {
  std::string name;
  const Type* type = nullptr;
  bool has_default = false;
  int64_t default_int = 0;    // Int / Bool default
  double default_num = 0;     // Num default
  std::string default_text;   // Text default
};

struct Type {
  TypeKind kind = TypeKind::Error;
  std::string name;                // item type name; empty for anonymous rows
  std::vector<FieldInfo> fields;   // Item: its fields. Keyed: unused (see element)
  const Type* element = nullptr;   // Seq: element type. Keyed: the row item (keys first)
  uint32_t key_count = 0;          // Keyed: how many leading row fields form the key
  // The outcome of an event that declares a result (`-> T`): an item named "outcome of T" whose
  // fields are ok, reason, then the slots of the value (one field "value" for a scalar or a list;
  // "value.f" for each field f of an item), so `.value` is the value's slots from slot 2 on.
  const Type* value = nullptr;
  // An enum (`enum Status { open, shipped }`): kind Int, named, its members in declaration order;
  // a value is the member's index, so later layers see an int (stored, passed and compared as
  // one) and only printing, JSON and the checker know the names.
  std::vector<std::string> members;

  bool is_enum() const { return !members.empty(); }
  bool is_scalar() const { return kind == TypeKind::Int || kind == TypeKind::Num || kind == TypeKind::Bool || kind == TypeKind::Text; }
  bool is_list() const { return kind == TypeKind::Seq || kind == TypeKind::Keyed; }
  bool is_ref() const { return kind == TypeKind::Text || is_list(); }  // slot holds a counted pointer
  // Slots a value of this type takes in a frame (an item: its fields' slots, nested items flattened).
  uint32_t width() const;
  // An item: the first of field i's slots inside the item (the widths of the fields before it).
  uint32_t slot_of(size_t field) const;
  // An item: the scalar or list type held in slot k of its flattened slots; else this type.
  const Type* slot_type(uint32_t k) const;
  // Cells one element (row) takes in a list of this type.
  uint32_t row_width() const { return element ? element->width() : 0; }
  int field_index(const std::string& n) const;
  bool all_fields_default() const;  // Keyed: every non-key field has a default
};

std::string type_name(const Type* t);  // as the user writes it

class TypeTable {
 public:
  TypeTable();
  const Type* error() const { return &error_; }
  const Type* void_type() const { return &void_; }
  const Type* int_type() const { return &int_; }
  const Type* num_type() const { return &num_; }
  const Type* bool_type() const { return &bool_; }
  const Type* text_type() const { return &text_; }
  const Type* outcome() const { return outcome_; }
  const Type* outcome_of(const Type* value);  // outcome() for nothing; interned per value type
  const Type* seq_of(const Type* element);
  // A keyed list: keys and fields must be scalars; their row item is made anonymous.
  const Type* keyed(std::vector<FieldInfo> keys, std::vector<FieldInfo> fields);
  Type* new_item(std::string name);  // nominal: each call is a distinct type
  Type* new_enum(std::string name, std::vector<std::string> members);  // nominal, like items

 private:
  Type error_, void_, int_, num_, bool_, text_;
  const Type* outcome_;
  std::deque<Type> owned_;
  std::map<const Type*, const Type*> seqs_;
  std::map<const Type*, const Type*> outcomes_;
  std::map<std::string, const Type*> keyed_;
};

}  // namespace pure
