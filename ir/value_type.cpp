// ir/value_type.cpp — ValueType: a checked type copied out of the frontend for hosts (the
// parameters and results of events and queries).
#include "base/assert.h"
#include "ir/ir.h"

namespace pure::ir {

uint32_t ValueType::width() const {
  if (kind == Kind::Void) return 0;
  if (kind != Kind::Item) return 1;
  uint32_t w = 0;
  for (const ValueType& f : fields) w += f.width();
  return w;
}

const ValueType& ValueType::slot(uint32_t k) const {
  if (kind != Kind::Item) return *this;
  for (const ValueType& f : fields) {
    uint32_t w = f.width();
    if (k < w) return f.slot(k);
    k -= w;
  }
  PURE_ASSERT(false && "slot past the item's width");
  return *this;
}

static ValueType::Kind kind_of(TypeKind k) {
  switch (k) {
    case TypeKind::Int: return ValueType::Kind::Int;
    case TypeKind::Num: return ValueType::Kind::Num;
    case TypeKind::Bool: return ValueType::Kind::Bool;
    case TypeKind::Text: return ValueType::Kind::Text;
    case TypeKind::Item: return ValueType::Kind::Item;
    case TypeKind::Seq: return ValueType::Kind::Seq;
    case TypeKind::Keyed: return ValueType::Kind::Keyed;
    default: return ValueType::Kind::Void;
  }
}

ValueType value_type_of(const Type* t) {
  ValueType v;
  if (!t) return v;
  v.kind = kind_of(t->kind);
  v.name = t->kind == TypeKind::Item ? t->name : type_name(t);
  v.members = t->members;
  const Type* row = t->kind == TypeKind::Item ? t : t->is_list() ? t->element : nullptr;
  if (t->kind == TypeKind::Seq && row && row->kind != TypeKind::Item) {
    v.field_names.push_back("");
    v.fields.push_back(value_type_of(row));
    return v;
  }
  if (row) {
    v.row_is_item = t->kind == TypeKind::Seq;
    for (const FieldInfo& f : row->fields) {
      v.field_names.push_back(f.name);
      v.fields.push_back(value_type_of(f.type));
    }
  }
  v.key_count = t->kind == TypeKind::Keyed ? t->key_count : 0;
  return v;
}

std::string value_type_name(const ValueType& t) {
  switch (t.kind) {
    case ValueType::Kind::Void: return "nothing";
    case ValueType::Kind::Int: return t.members.empty() ? "int" : t.name;
    case ValueType::Kind::Num: return "num";
    case ValueType::Kind::Bool: return "bool";
    case ValueType::Kind::Text: return "text";
    default: return t.name;
  }
}

}  // namespace pure::ir
