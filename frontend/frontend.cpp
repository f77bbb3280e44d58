// frontend/frontend.cpp — runs the parser and the checker in order.
#include "frontend/frontend.h"

#include <algorithm>

#include "frontend/checker.h"
#include "frontend/parser.h"

namespace pure {

// Offset of the first byte that is not part of well-formed UTF-8 (overlong forms, surrogates and
// code points past U+10FFFF are ill-formed), or -1.
static int64_t first_invalid_utf8(const std::string& s) {
  size_t i = 0, n = s.size();
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    if (len == 0 || c > 0xF4 || i + len > n) return static_cast<int64_t>(i);
    uint32_t cp = c & (0x7F >> len);
    for (size_t k = 1; k < len; ++k) {
      unsigned char d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return static_cast<int64_t>(i);
      cp = (cp << 6) | (d & 0x3F);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
      return static_cast<int64_t>(i);
    i += len;
  }
  return -1;
}

namespace {

TypeExprPtr named_type(Loc loc, const std::string& name) {
  auto t = std::make_unique<TypeExpr>();
  t->kind = TypeExpr::Named;
  t->loc = loc;
  t->name = name;
  return t;
}

TypeExpr::Field old_field(Loc loc, const std::pair<std::string, std::string>& col) {
  TypeExpr::Field f;
  f.loc = loc;
  f.name = col.first;
  f.type = named_type(loc, col.second);
  return f;
}

// The declaration of an old version's list as the migrate block reads it: `old.NAME`, written as
// the parser would have built it (its place: the migrate block's, for messages).
ListDecl old_list_decl(const OldList& old, Loc loc) {
  ListDecl d;
  d.loc = loc;
  d.name = "old." + old.name;
  auto t = std::make_unique<TypeExpr>();
  t->loc = loc;
  if (old.sequence) {
    t->kind = TypeExpr::Seq;
    if (old.cols.size() == 1 && old.cols[0].first.empty()) {
      t->element = named_type(loc, old.cols[0].second);
    } else {
      auto item = std::make_unique<TypeExpr>();
      item->kind = TypeExpr::Keyed;
      item->loc = loc;
      for (const auto& c : old.cols) item->fields.push_back(old_field(loc, c));
      t->element = std::move(item);
    }
  } else {
    t->kind = TypeExpr::Keyed;
    for (size_t c = 0; c < old.cols.size(); ++c)
      (c < old.key_count ? t->keys : t->fields).push_back(old_field(loc, old.cols[c]));
  }
  d.type = std::move(t);
  return d;
}

// Types the old lists' enum columns by the old source's enums: the module's own enum of that name
// when its members begin with the old ones, else an enum `old.NAME` declared for the block.
std::vector<OldList> old_enums_resolved(Module& m, const std::vector<OldList>& lists, Loc loc) {
  std::vector<OldList> out = lists;
  for (OldList& old : out)
    for (size_t c = 0; c < old.cols.size() && c < old.members.size(); ++c) {
      const std::vector<std::string>& members = old.members[c];
      if (members.empty()) continue;
      std::string& type = old.cols[c].second;
      bool same = false, declared = false;
      for (const ItemDecl& d : m.types) {
        if (d.is_enum && d.name == type && d.members.size() >= members.size() &&
            std::equal(members.begin(), members.end(), d.members.begin()))
          same = true;
        declared |= d.is_enum && d.name == "old." + type;
      }
      if (same) continue;
      type = "old." + type;
      if (declared) continue;
      ItemDecl e;
      e.loc = loc;
      e.name = type;
      e.is_enum = true;
      e.members = members;
      e.member_locs.assign(members.size(), loc);
      m.types.push_back(std::move(e));
    }
  return out;
}

}  // namespace

CheckedModule compile_frontend(const Source& source, Diagnostics& diags, int run_test,
                               const std::vector<OldList>* old_lists) {
  CheckedModule result;
  if (int64_t bad = first_invalid_utf8(source.text()); bad >= 0) {
    diags.error(source.loc_at(static_cast<uint32_t>(bad)), "the file is not valid UTF-8 here",
                "Pure source text must be UTF-8");
    return result;
  }
  result.module = parse_module(source, diags);
  Module& m = result.module;
  if (run_test >= 0 && static_cast<size_t>(run_test) < m.tests.size()) {
    if (m.main_index >= 0) m.funcs.erase(m.funcs.begin() + m.main_index);
    m.main_index = static_cast<int>(m.funcs.size());
    m.funcs.push_back(std::move(m.tests[static_cast<size_t>(run_test)].func));
  }
  if (m.migrate && old_lists) {
    for (const OldList& old : old_enums_resolved(m, *old_lists, m.migrate->loc))
      m.lists.push_back(old_list_decl(old, m.migrate->loc));
    m.funcs.push_back(std::move(*m.migrate));
  }
  m.migrate.reset();
  check_module(result.module, *result.types, diags);
  return result;
}

}  // namespace pure
