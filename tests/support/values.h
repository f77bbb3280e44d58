// tests/support/values.h — vm::Value builders for tests that call events and queries with items
// and lists (vm::Value has of_int/of_num/of_bool/of_text for the scalars). Header only, needs
// only vm/vm.h.
#pragma once

#include <utility>
#include <vector>

#include "vm/vm.h"

namespace pure::test {

// An item value: its fields in declaration order.
inline vm::Value item_value(std::vector<vm::Value> fields) {
  vm::Value v;
  v.kind = vm::Value::Kind::Item;
  v.items = std::move(fields);
  return v;
}

// A list (seq) value: its elements in order.
inline vm::Value list_value(std::vector<vm::Value> elements) {
  vm::Value v;
  v.kind = vm::Value::Kind::List;
  v.items = std::move(elements);
  return v;
}

}  // namespace pure::test
