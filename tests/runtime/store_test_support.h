// tests/runtime/store_test_support.h — helpers for store tests: schemas, canonical dumps of a
// list (texts by bytes, never by address), random values, and the seed from PURE_STORE_SEED.
// Depends on runtime/store.h only.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "runtime/store.h"

namespace store_test {

using namespace pure::rt;

inline uint64_t seed_from_env(uint64_t fallback) {
  const char* s = std::getenv("PURE_STORE_SEED");
  return s && *s ? std::strtoull(s, nullptr, 10) : fallback;
}

inline ColType column_type(const ListSchema& s, uint32_t c) {
  return c < s.key_width() ? s.key[c] : s.fields[c - s.key_width()];
}

// One row as text: Int/Bool as decimal, Num as hex bits, Text as its bytes.
inline void append_row(std::string& out, const ListSchema& s, const Cell* row) {
  for (uint32_t c = 0; c < s.row_width(); ++c) {
    if (column_type(s, c) == ColType::Text) {
      auto* t = reinterpret_cast<const Text*>(row[c]);
      out += '"';
      out.append(t->bytes, t->len);
      out += '"';
    } else {
      out += std::to_string(static_cast<int64_t>(row[c]));
    }
    out += c + 1 < s.row_width() ? ',' : ';';
  }
}

inline std::string dump(const ListReader& list) {
  std::string out = std::to_string(list.count()) + ":";
  int64_t position = 0;
  for (auto c = list.scan(); c->valid(); c->next()) {
    if (list.schema().is_sequence && c->position() != position) out += "<bad position>";
    ++position;
    append_row(out, list.schema(), c->row());
  }
  return out;
}

inline std::string dump(const Snapshot& snapshot) {
  std::string out;
  for (size_t i = 0; i < snapshot.list_count(); ++i) out += dump(snapshot.list(i)) + "\n";
  return out;
}

inline std::string dump(Store& store) {
  std::string out;
  for (size_t i = 0; i < store.list_count(); ++i) out += dump(store.list(i)) + "\n";
  return out;
}

// Lists that cover composite keys, text keys, text fields and a sequence.
inline std::vector<ListSchema> mixed_schemas() {
  return {
      {"edges", false, {ColType::Int, ColType::Int}, {ColType::Int, ColType::Num}},
      {"people", false, {ColType::Text, ColType::Bool}, {ColType::Text, ColType::Int}},
      {"log", true, {}, {ColType::Int, ColType::Text}},
      {"counts", false, {ColType::Int}, {ColType::Int}},
  };
}

}  // namespace store_test
