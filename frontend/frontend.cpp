// frontend/frontend.cpp — runs the parser and the checker in order.
#include "frontend/frontend.h"

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
    for (const OldList& old : *old_lists) m.lists.push_back(old_list_decl(old, m.migrate->loc));
    m.funcs.push_back(std::move(*m.migrate));
  }
  m.migrate.reset();
  check_module(result.module, *result.types, diags);
  return result;
}

}  // namespace pure
