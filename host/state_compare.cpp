// host/state_compare.cpp — comparing two states row by row (state_compare.h).
#include "host/state_compare.h"

#include <bit>
#include <cstdio>
#include <string_view>

#include "runtime/text.h"

namespace pure::host {

namespace {

bool same_schema(const rt::ListSchema& a, const rt::ListSchema& b) {
  return a.name == b.name && a.is_sequence == b.is_sequence && a.key == b.key && a.fields == b.fields;
}

std::string cell_text(rt::ColType type, rt::Cell cell) {
  if (type == rt::ColType::Num) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", std::bit_cast<double>(cell));
    return buf;
  }
  if (type != rt::ColType::Text) return std::to_string(static_cast<int64_t>(cell));
  auto* t = reinterpret_cast<const rt::Text*>(cell);
  std::string_view v(t->bytes, t->len);
  std::string out = "'" + std::string(v.substr(0, 40)) + (v.size() > 40 ? "...'" : "'");
  return out + " (" + std::to_string(t->len) + " bytes)";
}

}  // namespace

std::string compare_states(const rt::Snapshot& a, const rt::Snapshot& b) {
  if (a.list_count() != b.list_count())
    return std::to_string(a.list_count()) + " stored lists here, " + std::to_string(b.list_count()) + " there";
  for (size_t i = 0; i < a.list_count(); ++i) {
    const rt::ListReader& la = a.list(i);
    const rt::ListReader& lb = b.list(i);
    const rt::ListSchema& s = la.schema();
    if (!same_schema(s, lb.schema()))
      return "stored list " + std::to_string(i + 1) + ": '" + s.name + "' here, '" + lb.schema().name +
             "' there, or other columns";
    const std::string where = "list '" + s.name + "': ";
    if (la.count() != lb.count())
      return where + std::to_string(la.count()) + " rows here, " + std::to_string(lb.count()) + " there";
    const uint32_t width = s.row_width();
    auto ca = la.scan();
    auto cb = lb.scan();
    for (int64_t row = 1; ca->valid() && cb->valid(); ++row, ca->next(), cb->next()) {
      const rt::Cell* ra = ca->row();
      const rt::Cell* rb = cb->row();
      for (uint32_t c = 0; c < width; ++c) {
        rt::ColType type = c < s.key_width() ? s.key[c] : s.fields[c - s.key_width()];
        bool same = ra[c] == rb[c];
        if (type == rt::ColType::Text) {
          auto* ta = reinterpret_cast<const rt::Text*>(ra[c]);
          auto* tb = reinterpret_cast<const rt::Text*>(rb[c]);
          same = std::string_view(ta->bytes, ta->len) == std::string_view(tb->bytes, tb->len);
        }
        if (!same)
          return where + "row " + std::to_string(row) + ", column " + std::to_string(c + 1) + ": " +
                 cell_text(type, ra[c]) + " here, " + cell_text(type, rb[c]) + " there";
      }
    }
    if (ca->valid() != cb->valid()) return where + "the rows end at different places";  // counts lied
  }
  return "";
}

}  // namespace pure::host
