// frontend/types.cpp — type names and interning.
#include "frontend/types.h"

#include "base/assert.h"

namespace pure {

int Type::field_index(const std::string& n) const {
  const std::vector<FieldInfo>& fs = kind == TypeKind::Keyed ? element->fields : fields;
  for (size_t i = 0; i < fs.size(); ++i)
    if (fs[i].name == n) return static_cast<int>(i);
  return -1;
}

uint32_t Type::width() const {
  if (kind == TypeKind::Void) return 0;
  if (kind != TypeKind::Item) return 1;
  uint32_t w = 0;
  for (const FieldInfo& f : fields) w += f.type ? f.type->width() : 1;
  return w;
}

uint32_t Type::slot_of(size_t field) const {
  PURE_ASSERT(kind == TypeKind::Item && field <= fields.size());
  uint32_t at = 0;
  for (size_t i = 0; i < field; ++i) at += fields[i].type ? fields[i].type->width() : 1;
  return at;
}

const Type* Type::slot_type(uint32_t k) const {
  if (kind != TypeKind::Item) return this;
  for (const FieldInfo& f : fields) {
    uint32_t w = f.type ? f.type->width() : 1;
    if (k < w) return f.type ? f.type->slot_type(k) : f.type;
    k -= w;
  }
  PURE_ASSERT(false && "slot past the item's width");
  return nullptr;
}

bool Type::all_fields_default() const {
  for (size_t i = key_count; i < element->fields.size(); ++i)
    if (!element->fields[i].has_default) return false;
  return true;
}

static std::string field_list(const std::vector<FieldInfo>& fs, size_t from, size_t to) {
  std::string s;
  for (size_t i = from; i < to; ++i) {
    if (i > from) s += ", ";
    s += fs[i].name + ": " + type_name(fs[i].type);
  }
  return s;
}

std::string type_name(const Type* t) {
  if (!t) return "?";
  switch (t->kind) {
    case TypeKind::Error: return "<error>";
    case TypeKind::Void: return "nothing";
    case TypeKind::Int: return t->is_enum() ? t->name : "int";
    case TypeKind::Num: return "num";
    case TypeKind::Bool: return "bool";
    case TypeKind::Text: return "text";
    case TypeKind::Item: return t->name.empty() ? "{" + field_list(t->fields, 0, t->fields.size()) + "}" : t->name;
    case TypeKind::Seq: return "seq " + type_name(t->element);
    case TypeKind::Keyed: {
      const auto& fs = t->element->fields;
      std::string keys = field_list(fs, 0, t->key_count);
      if (t->key_count > 1) keys = "(" + keys + ")";
      return "list by " + keys + " {" + (fs.size() > t->key_count ? " " + field_list(fs, t->key_count, fs.size()) + " " : "") + "}";
    }
  }
  return "?";
}

TypeTable::TypeTable() {
  error_.kind = TypeKind::Error;
  void_.kind = TypeKind::Void;
  int_.kind = TypeKind::Int;
  num_.kind = TypeKind::Num;
  bool_.kind = TypeKind::Bool;
  text_.kind = TypeKind::Text;
  Type* o = new_item("outcome");
  o->fields.push_back({"ok", &bool_});
  o->fields.push_back({"reason", &text_});
  outcome_ = o;
}

Type* TypeTable::new_enum(std::string name, std::vector<std::string> members) {
  Type& t = owned_.emplace_back();
  t.kind = TypeKind::Int;
  t.name = std::move(name);
  t.members = std::move(members);
  return &t;
}

Type* TypeTable::new_item(std::string name) {
  Type& t = owned_.emplace_back();
  t.kind = TypeKind::Item;
  t.name = std::move(name);
  return &t;
}

const Type* TypeTable::outcome_of(const Type* value) {
  if (!value || value->kind == TypeKind::Void) return outcome_;
  auto it = outcomes_.find(value);
  if (it != outcomes_.end()) return it->second;
  Type* o = new_item("outcome of " + type_name(value));
  o->fields = outcome_->fields;
  o->value = value;
  if (value->kind == TypeKind::Item)
    for (const FieldInfo& f : value->fields) o->fields.push_back({"value." + f.name, f.type});
  else
    o->fields.push_back({"value", value});
  outcomes_[value] = o;
  return o;
}

const Type* TypeTable::seq_of(const Type* element) {
  auto it = seqs_.find(element);
  if (it != seqs_.end()) return it->second;
  Type& t = owned_.emplace_back();
  t.kind = TypeKind::Seq;
  t.element = element;
  seqs_[element] = &t;
  return &t;
}

const Type* TypeTable::keyed(std::vector<FieldInfo> keys, std::vector<FieldInfo> fields) {
  std::string sig;
  for (auto& k : keys) sig += k.name + ":" + type_name(k.type) + ",";
  sig += "|";
  for (auto& f : fields) {
    sig += f.name + ":" + type_name(f.type);
    if (f.has_default) sig += "=" + std::to_string(f.default_int) + "/" + std::to_string(f.default_num) + "/" + f.default_text;
    sig += ",";
  }
  auto it = keyed_.find(sig);
  if (it != keyed_.end()) return it->second;
  Type* row = new_item("");
  for (auto& k : keys) row->fields.push_back(k);
  for (auto& f : fields) row->fields.push_back(f);
  Type& t = owned_.emplace_back();
  t.kind = TypeKind::Keyed;
  t.element = row;
  t.key_count = static_cast<uint32_t>(keys.size());
  keyed_[sig] = &t;
  return &t;
}

}  // namespace pure
