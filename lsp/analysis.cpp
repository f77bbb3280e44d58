// lsp/analysis.cpp — see analysis.h. The index is built by one walk over the checked tree: each
// name that the checker resolved (Expr::name_kind and ref, Stmt::local, builtin ids, field
// accesses with their operand's type) becomes an occurrence of a symbol; a declaration's name is
// found in the text after its keyword (the tree keeps the keyword's place).
#include "lsp/analysis.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>

#include "frontend/frontend.h"
#include "frontend/token.h"
#include "ir/ir.h"

namespace pure::lsp {

namespace {

// What a name means: one kind and the numbers or names that tell symbols of the kind apart.
struct Key {
  enum Kind : uint8_t { None, Local, Func, List, Type, Const, Field, Builtin } kind = None;
  int a = -1;                     // function index (Local, Func), list, type, const or builtin index
  int b = -1;                     // Local: the local's id in its function
  const pure::Type* owner = nullptr;  // Field: the item or row type it belongs to
  std::string name;               // Field: its name
  bool operator<(const Key& o) const { return std::tie(kind, a, b, owner, name) < std::tie(o.kind, o.a, o.b, o.owner, o.name); }
  bool operator==(const Key& o) const { return !(*this < o) && !(o < *this); }
};

struct Occurrence {
  uint32_t begin = 0, end = 0;  // byte offsets of the name
  Key key;
  bool is_declaration = false;
};

bool ident_start(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool ident_char(unsigned char c) { return ident_start(c) || (c >= '0' && c <= '9'); }

bool is_keyword(const std::string& s) {
#define X(name, text) if (s == text) return true;
  PURE_KEYWORDS(X)
#undef X
  return false;
}

const char* const kKeywords[] = {
#define X(name, text) text,
    PURE_KEYWORDS(X)
#undef X
};

// Signatures of the standard functions and list methods whose type rule is code (builtins.def's
// "*"), as docs/language.md gives them.
const std::map<std::string, std::string>& generic_functions() {
  static const std::map<std::string, std::string> m = {
      {"print", "print(value)"},
      {"write", "write(value)"},
      {"input", "input() -> text"},
      {"num", "num(x: int | num) -> num"},
      {"int", "int(x: num | bool | int) -> int"},
      {"text", "text(x: int | num | bool | text | list) -> text"},
      {"abs", "abs(x: int | num) -> int | num"},
      {"min", "min(a, b) -> int | num | text"},
      {"max", "max(a, b) -> int | num | text"},
      {"repeat", "repeat(value, n: int) -> seq"},
  };
  return m;
}

const std::map<std::string, std::string>& generic_list_methods() {
  static const std::map<std::string, std::string> m = {
      {"push", "list.push(item)"},
      {"pop", "list.pop() -> the element"},
      {"has", "list.has(key...) -> bool"},
      {"remove", "list.remove(key...) -> bool"},
      {"first", "list.first() -> the element"},
      {"last", "list.last() -> the element"},
      {"range", "list.range(lo: int, hi: int) -> a slice"},
      {"sort", "list.sort()"},
      {"sort_by", "list.sort_by(field)"},
      {"sum", "list.sum([field]) -> int | num"},
      {"min", "list.min([field]) -> the element or field type"},
      {"max", "list.max([field]) -> the element or field type"},
      {"clear", "list.clear()"},
      {"reverse", "list.reverse()"},
      {"contains", "list.contains(value) -> bool"},
      {"join", "list.join(separator: text) -> text"},
      {"get", "list.get(key...) -> the row item"},
      {"take", "list.take(n: int) -> the first n items, a new list"},
      {"slice", "list.slice(lo: int, hi: int) -> the items at lo .. hi-1, a new list"},
  };
  return m;
}

std::string kind_type(char k) {
  switch (k) {
    case 'i': return "int";
    case 'n': return "num";
    case 'b': return "bool";
    case 't': return "text";
    case 's': return "seq text";
    default: return "nothing";
  }
}

std::string builtin_signature(int id) {
  const BuiltinInfo& info = builtin_info(static_cast<Builtin>(id));
  std::string prefix = info.kind == BuiltinKind::TextMethod ? "text." : info.kind == BuiltinKind::ListMethod ? "list." : "";
  if (!info.has_signature()) {
    const auto& table = info.kind == BuiltinKind::ListMethod ? generic_list_methods() : generic_functions();
    auto it = table.find(info.name);
    return it != table.end() ? it->second : prefix + info.name + "(...)";
  }
  std::string s = prefix + info.name + "(";
  for (const char* a = info.args; *a; ++a) {
    if (a != info.args) s += ", ";
    s += kind_type(*a);
  }
  s += ")";
  if (info.result[0] != 'v') s += " -> " + kind_type(info.result[0]);
  return s;
}

const char* func_keyword(FuncKind k) {
  switch (k) {
    case FuncKind::Event: return "event";
    case FuncKind::Query: return "query";
    default: return "fn";
  }
}

std::string fields_text(const pure::Type* item, uint32_t from) {
  std::string s;
  if (!item) return s;
  for (size_t i = from; i < item->fields.size(); ++i) {
    if (i > from) s += ", ";
    s += item->fields[i].name + ": " + type_name(item->fields[i].type);
  }
  return s;
}

}  // namespace

struct Document::Impl {
  std::string path;
  std::unique_ptr<Source> source;
  std::unique_ptr<Diagnostics> diags;
  CheckedModule checked;
  std::vector<uint32_t> line_starts;
  std::vector<Diag> diag_list;
  std::vector<FileDiag> imported_diags;
  std::vector<Occurrence> occ;  // sorted by begin once built
  std::map<Key, size_t> declaration;  // key -> index in occ of its declaring occurrence
  std::vector<std::pair<uint32_t, uint32_t>> func_spans;  // [keyword offset, next declaration) of each function
  // The document's own bytes: with `use` lines, the text checked is the document followed by the
  // imported files (resolve_imports); what lies past own_size is not this document's, and no
  // position, definition, reference or symbol points there.
  uint32_t own_size = 0;

  const std::string& text() const { return source->text(); }

  // ---- positions -------------------------------------------------------------------------------
  void index_lines() {
    line_starts.push_back(0);
    for (uint32_t i = 0; i < text().size(); ++i)
      if (text()[i] == '\n') line_starts.push_back(i + 1);
  }

  Position position_of(uint32_t offset) const {
    offset = std::min<uint32_t>(offset, static_cast<uint32_t>(text().size()));
    size_t line = std::upper_bound(line_starts.begin(), line_starts.end(), offset) - line_starts.begin() - 1;
    uint32_t units = 0;
    for (uint32_t i = line_starts[line]; i < offset;) {
      unsigned char c = static_cast<unsigned char>(text()[i]);
      uint32_t len = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
      units += len == 4 ? 2 : 1;
      i += len;
    }
    return {static_cast<uint32_t>(line), units};
  }

  uint32_t offset_of(Position pos) const { return std::min(offset_in_text(pos), own_size); }
  uint32_t offset_in_text(Position pos) const {
    if (pos.line >= line_starts.size()) return static_cast<uint32_t>(text().size());
    uint32_t i = line_starts[pos.line], units = 0;
    while (i < text().size() && text()[i] != '\n' && units < pos.character) {
      unsigned char c = static_cast<unsigned char>(text()[i]);
      uint32_t len = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
      units += len == 4 ? 2 : 1;
      i = std::min<uint32_t>(i + len, static_cast<uint32_t>(text().size()));
    }
    return i;
  }

  Range range_of(uint32_t begin, uint32_t end) const { return {position_of(begin), position_of(end)}; }
  // The same range in the imported file its text came from (lines of the combined text map to the
  // file's lines one to one; a line is copied whole, so its characters are the same).
  Range range_in_file(uint32_t begin, uint32_t end) const {
    Range r = range_of(begin, end);
    r.start.line = source->line_in_file(r.start.line + 1) - 1;
    r.end.line = source->line_in_file(r.end.line + 1) - 1;
    return r;
  }

  // ---- scanning the text -----------------------------------------------------------------------
  uint32_t skip_space(uint32_t i) const {
    const std::string& t = text();
    while (i < t.size()) {
      if (t[i] == ' ' || t[i] == '\t' || t[i] == '\r' || t[i] == '\n') {
        ++i;
      } else if (t[i] == '/' && i + 1 < t.size() && t[i + 1] == '/') {
        while (i < t.size() && t[i] != '\n') ++i;
      } else {
        break;
      }
    }
    return i;
  }

  uint32_t ident_end(uint32_t i) const {
    while (i < text().size() && ident_char(static_cast<unsigned char>(text()[i]))) ++i;
    return i;
  }

  // The end of the token that starts at offset i (for a diagnostic's range).
  uint32_t token_end(uint32_t i) const {
    const std::string& t = text();
    if (i >= t.size()) return i;
    unsigned char c = static_cast<unsigned char>(t[i]);
    if (ident_start(c)) return ident_end(i);
    if (c >= '0' && c <= '9') {
      while (i < t.size() && (ident_char(static_cast<unsigned char>(t[i])) || (t[i] == '.' && !(i + 1 < t.size() && t[i + 1] == '.'))))
        ++i;
      return i;
    }
    if (c == '"') {
      for (++i; i < t.size() && t[i] != '\n'; ++i) {
        if (t[i] == '\\') ++i;
        else if (t[i] == '"') return i + 1;
      }
      return i;
    }
    static const char* const kTwo[] = {"==", "!=", "<=", ">=", "->", "..", "+=", "-=", "*=", "/=", "%=", "<<", ">>"};
    for (const char* two : kTwo)
      if (t.compare(i, 2, two) == 0) return i + 2;
    uint32_t len = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return std::min<uint32_t>(i + len, static_cast<uint32_t>(t.size()));
  }

  // The identifier that follows the token at offset i (a declaration's keyword, a '.', a name and
  // a ','): [begin, end), or begin == end when there is none.
  std::pair<uint32_t, uint32_t> name_after(uint32_t i, const std::string& expected) const {
    uint32_t j = skip_space(token_end(i));
    if (j < text().size() && text()[j] == ',') j = skip_space(j + 1);
    uint32_t e = ident_end(j);
    if (e == j || text().compare(j, e - j, expected) != 0) return {j, j};
    return {j, e};
  }

  // ---- building the index ----------------------------------------------------------------------
  void add(uint32_t begin, uint32_t end, Key key, bool declaration_here = false) {
    if (begin >= end || key.kind == Key::None) return;
    occ.push_back({begin, end, key, declaration_here});
  }

  void add_named(uint32_t at, const std::string& name, Key key, bool declaration_here = false) {
    if (at + name.size() > text().size() || name.empty() || text().compare(at, name.size(), name) != 0) return;
    add(at, at + static_cast<uint32_t>(name.size()), std::move(key), declaration_here);
  }

  int find_type(const std::string& name) const {
    for (size_t i = 0; i < checked.module.types.size(); ++i)
      if (checked.module.types[i].name == name) return static_cast<int>(i);
    return -1;
  }
  int find_list(const std::string& name) const {
    for (size_t i = 0; i < checked.module.lists.size(); ++i)
      if (checked.module.lists[i].name == name) return static_cast<int>(i);
    return -1;
  }
  int find_const(const std::string& name) const {
    for (size_t i = 0; i < checked.module.consts.size(); ++i)
      if (checked.module.consts[i].name == name) return static_cast<int>(i);
    return -1;
  }

  // A declared field: `name: T` inside a type's or a stored list's braces (declares: the field is
  // declared there), or inside a list type written elsewhere, a parameter's, a result's, a `let`'s
  // or a new list's (resolved: the type the checker made of it). A keyed list type is one type per
  // shape, so such a field name is an occurrence of the same field as the stored list's: a rename
  // renames it too, or the parameter would no longer take the list.
  void walk_type(const TypeExpr* t, const pure::Type* owner, bool declares = true) {
    if (!t) return;
    switch (t->kind) {
      case TypeExpr::Named:
        if (int ti = find_type(t->name); ti >= 0) add_named(t->loc.offset, t->name, {Key::Type, ti});
        else if (int li = find_list(t->name); li >= 0) add_named(t->loc.offset, t->name, {Key::List, li});
        break;
      case TypeExpr::Seq:
        walk_type(t->element.get(), nullptr);
        break;
      case TypeExpr::Keyed:
        for (const auto* fields : {&t->keys, &t->fields})
          for (const TypeExpr::Field& f : *fields) {
            if (owner) add_named(f.loc.offset, f.name, {Key::Field, -1, -1, owner, f.name}, declares);
            walk_type(f.type.get(), nullptr);
            if (f.default_value) walk_expr(*f.default_value, -1);
          }
        break;
    }
  }
  void walk_type_used(const TypeExpr* t, const pure::Type* resolved) {
    const pure::Type* owner = nullptr;
    if (t && resolved && t->kind == TypeExpr::Keyed && resolved->kind == TypeKind::Keyed) owner = resolved->element;
    if (t && resolved && t->kind == TypeExpr::Seq && resolved->kind == TypeKind::Seq && t->element &&
        t->element->kind == TypeExpr::Keyed && resolved->element && resolved->element->kind == TypeKind::Item) {
      walk_type(t->element.get(), resolved->element, false);
      return;
    }
    walk_type(t, owner, false);
  }

  void walk_expr(const Expr& e, int fi) {
    switch (e.kind) {
      case ExprKind::Name:
        if (e.name_kind == NameKind::Local && fi >= 0) add_named(e.loc.offset, e.text, {Key::Local, fi, e.ref});
        else if (e.name_kind == NameKind::StoredList) add_named(e.loc.offset, e.text, {Key::List, e.ref});
        else if (e.name_kind == NameKind::Function) add_named(e.loc.offset, e.text, {Key::Func, e.ref});
        break;
      case ExprKind::Call:
        if (e.builtin >= 0) add_named(e.loc.offset, e.text, {Key::Builtin, e.builtin});
        else if (e.name_kind == NameKind::Function) add_named(e.loc.offset, e.text, {Key::Func, e.ref});
        break;
      case ExprKind::Int:
      case ExprKind::Num:
      case ExprKind::Bool:
      case ExprKind::Text: {
        // a constant's name, which the checker turned into its literal
        uint32_t at = e.loc.offset;
        if (at < text().size() && ident_start(static_cast<unsigned char>(text()[at]))) {
          uint32_t end = ident_end(at);
          std::string name = text().substr(at, end - at);
          if (int ci = find_const(name); ci >= 0) add(at, end, {Key::Const, ci});
        }
        break;
      }
      case ExprKind::Method:
        if (e.builtin >= 0) {
          auto [b, n] = name_after(e.loc.offset, e.text);
          add(b, n, {Key::Builtin, e.builtin});
          // `.sum(balance)`, `.min(f)`, `.max(f)`, `.sort_by(f desc, g)` name fields of the elements
          Builtin id = static_cast<Builtin>(e.builtin);
          const pure::Type* list = e.args.empty() || !e.args[0] ? nullptr : e.args[0]->type;
          if ((id == Builtin::LSum || id == Builtin::LMin || id == Builtin::LMax || id == Builtin::LSortBy) && list &&
              list->is_list() && list->element && list->element->kind == TypeKind::Item)
            for (size_t k = 1; k < e.args.size(); ++k) {
              const Expr* a = e.args[k].get();
              if (a && a->kind == ExprKind::Name && a->name_kind == NameKind::Unresolved && a->type &&
                  list->element->field_index(a->text) >= 0)
                add_named(a->loc.offset, a->text, {Key::Field, -1, -1, list->element, a->text});
            }
        }
        break;
      case ExprKind::Field:
        if (!e.args.empty() && e.args[0]->type) {
          const pure::Type* owner = e.args[0]->type;
          if (owner->kind == TypeKind::Item) {
            auto [b, n] = name_after(e.loc.offset, e.text);
            add(b, n, {Key::Field, -1, -1, owner, e.text});
          }
        }
        break;
      case ExprKind::ItemLit:
        if (!e.text.empty()) {
          if (int ti = find_type(e.text); ti >= 0) add_named(e.loc.offset, e.text, {Key::Type, ti});
        }
        // the field names as written: the checker has cleared field_names, their places remain
        if (e.type && e.type->kind == TypeKind::Item)
          for (const Loc& at : e.field_locs) {
            uint32_t end = ident_end(at.offset);
            std::string name = text().substr(at.offset, end - at.offset);
            if (e.type->field_index(name) >= 0) add(at.offset, end, {Key::Field, -1, -1, e.type, name});
          }
        break;
      case ExprKind::NewList:
        walk_type_used(e.type_expr.get(), e.type);
        break;
      default:
        break;
    }
    for (const ExprPtr& a : e.args)
      if (a) walk_expr(*a, fi);
  }

  void walk_stmts(const std::vector<StmtPtr>& body, int fi) {
    for (const StmtPtr& s : body)
      if (s) walk_stmt(*s, fi);
  }

  void walk_stmt(const Stmt& s, int fi) {
    if (s.kind == StmtKind::Let && s.local >= 0) add_named(s.loc.offset, s.name, {Key::Local, fi, s.local}, true);
    if (s.kind == StmtKind::For) {
      if (s.local >= 0) add_named(s.loc.offset, s.name, {Key::Local, fi, s.local}, true);
      if (s.local2 >= 0 && !s.name2.empty()) {
        auto [b, n] = name_after(s.loc.offset, s.name2);
        add(b, n, {Key::Local, fi, s.local2}, true);
      }
    }
    walk_type_used(s.declared.get(), s.kind == StmtKind::Let ? local_type({Key::Local, fi, s.local}) : nullptr);
    if (s.expr) walk_expr(*s.expr, fi);
    if (s.target) walk_expr(*s.target, fi);
    if (s.range_end) walk_expr(*s.range_end, fi);
    walk_stmts(s.body, fi);
    walk_stmts(s.else_body, fi);
  }

  void build_index() {
    const Module& m = checked.module;
    for (size_t i = 0; i < m.consts.size(); ++i) {
      auto [b, n] = name_after(m.consts[i].loc.offset, m.consts[i].name);
      add(b, n, {Key::Const, static_cast<int>(i)}, true);
      if (m.consts[i].value) walk_expr(*m.consts[i].value, -1);
    }
    for (size_t i = 0; i < m.types.size(); ++i) {
      const ItemDecl& d = m.types[i];
      auto [b, n] = name_after(d.loc.offset, d.name);
      add(b, n, {Key::Type, static_cast<int>(i)}, true);
      walk_type(d.type.get(), d.is_alias ? nullptr : d.resolved);
    }
    for (size_t i = 0; i < m.lists.size(); ++i) {
      const ListDecl& d = m.lists[i];
      auto [b, n] = name_after(d.loc.offset, d.name);
      add(b, n, {Key::List, static_cast<int>(i)}, true);
      const pure::Type* row = d.resolved ? d.resolved->element : nullptr;
      walk_type(d.type.get(), row && row->kind == TypeKind::Item ? row : nullptr);
      if (d.type && d.type->kind == TypeExpr::Seq && d.type->element && row) walk_type(d.type->element.get(), row);
    }
    std::vector<uint32_t> starts;
    for (const auto& c : m.consts) starts.push_back(c.loc.offset);
    for (const auto& t : m.types) starts.push_back(t.loc.offset);
    for (const auto& l : m.lists) starts.push_back(l.loc.offset);
    for (const auto& f : m.funcs) starts.push_back(f.loc.offset);
    std::sort(starts.begin(), starts.end());
    for (size_t i = 0; i < m.funcs.size(); ++i) {
      const FuncDecl& f = m.funcs[i];
      int fi = static_cast<int>(i);
      auto [b, n] = name_after(f.loc.offset, f.name);
      if (!f.duplicate) add(b, n, {Key::Func, fi}, true);
      auto next = std::upper_bound(starts.begin(), starts.end(), f.loc.offset);
      func_spans.push_back({f.loc.offset, next == starts.end() ? static_cast<uint32_t>(text().size()) : *next});
      for (size_t p = 0; p < f.params.size(); ++p) {
        if (p < f.locals.size()) add_named(f.params[p].loc.offset, f.params[p].name, {Key::Local, fi, static_cast<int>(p)}, true);
        walk_type_used(f.params[p].type.get(), p < f.locals.size() ? f.locals[p].type : nullptr);
      }
      walk_type_used(f.result.get(), f.result_type);
      walk_stmts(f.body, fi);
    }
    std::stable_sort(occ.begin(), occ.end(), [](const Occurrence& a, const Occurrence& b) { return a.begin < b.begin; });
    for (size_t i = 0; i < occ.size(); ++i)
      if (occ[i].is_declaration) declaration.emplace(occ[i].key, i);
  }

  // ---- diagnostics -----------------------------------------------------------------------------
  void add_diag(const Loc& loc, const std::string& message, const std::string& hint) {
    uint32_t at = std::min<uint32_t>(loc.offset, static_cast<uint32_t>(text().size()));
    uint32_t end = token_end(at);
    if (end == at) end = at;  // at the end of the file: an empty range there
    Diag d{range_of(at, end), message};
    if (!hint.empty()) d.message += "\nhint: " + hint;
    diag_list.push_back(std::move(d));
  }

  void analyse() {
    own_size = static_cast<uint32_t>(text_in.size());
    ResolvedModule resolved;
    std::string import_errors;
    std::vector<ImportError> located;
    bool imported = resolve_imports(path, text_in, read_source_file, &resolved, &import_errors, &located);
    for (const ImportError& e : located)
      if (e.path != path) imported_diags.push_back({e.path, file_diag(e.path, e.diagnostic)});
    source = std::make_unique<Source>(path, imported ? std::move(resolved.text) : std::move(text_in));
    for (const auto& [line, file] : resolved.files) source->add_file(line, file);
    text_in.clear();
    index_lines();
    diags = std::make_unique<Diagnostics>(*source);
    checked = compile_frontend(*source, *diags);
    std::vector<pure::Diagnostic> list = diags->list();
    // An imported file's errors are shown at the first `use` (the editor has no place in another
    // file for them): the file and line, then the message.
    Loc use_at = checked.module.uses.empty() ? Loc{0, 1, 1} : checked.module.uses.front().loc;
    if (!imported) {
      std::string first = import_errors.substr(0, import_errors.find('\n'));
      if (size_t e = first.find(": error: "); e != std::string::npos) first.replace(e, 9, ": ");
      list.push_back({use_at, "in an imported file: " + first, {}});
    }
    for (pure::Diagnostic& d : list)
      if (d.loc.offset >= own_size && !resolved.files.empty()) {
        uint32_t end = std::max(token_end(d.loc.offset), d.loc.offset);
        Diag in_file{range_in_file(d.loc.offset, end), d.message};
        if (!d.hint.empty()) in_file.message += "\nhint: " + d.hint;
        imported_diags.push_back({source->file_of(d.loc.line), std::move(in_file)});
        d.message = "in an imported file: " + source->place(d.loc) + ":" + std::to_string(d.loc.col) + ": " + d.message;
        d.loc = use_at;
      }
    if (!diags->any()) {
      // what `pure-run --check` reports next: an implementation limit met in lowering
      ir::Program program = ir::lower_module(checked, path);
      for (const ir::LimitError& e : program.errors) list.push_back({e.loc, e.message, e.hint});
    }
    std::stable_sort(list.begin(), list.end(), [](const pure::Diagnostic& a, const pure::Diagnostic& b) {
      return a.loc.offset < b.loc.offset;
    });
    for (const pure::Diagnostic& d : list) add_diag(d.loc, d.message, d.hint);
    if (diags->count() > diags->list().size())
      diag_list.push_back({range_of(0, 0), "... and " + std::to_string(diags->count() - diags->list().size()) + " more errors"});
    build_index();
  }

  std::string text_in;

  // An error resolve_imports found in the imported file at file_path: its range there (the file is
  // read again for its line, to count UTF-16 units; unreadable, the byte column is used).
  static Diag file_diag(const std::string& file_path, const pure::Diagnostic& d) {
    Diag out{{{d.loc.line ? d.loc.line - 1 : 0, d.loc.col ? d.loc.col - 1 : 0}, {}}, d.message};
    if (!d.hint.empty()) out.message += "\nhint: " + d.hint;
    std::string text, why;
    if (d.loc.known() && read_source_file(file_path, &text, &why)) {
      Source file(file_path, std::move(text));
      std::string_view line = file.line_text(d.loc.line);
      uint32_t at = std::min<uint32_t>(d.loc.col - 1, static_cast<uint32_t>(line.size())), end = at;
      while (end < line.size() && ident_char(static_cast<unsigned char>(line[end]))) ++end;
      auto units = [&line](uint32_t bytes) {  // UTF-16 code units of the line's first bytes
        uint32_t n = 0;
        for (uint32_t i = 0; i < bytes && i < line.size(); ++i) {
          unsigned char c = static_cast<unsigned char>(line[i]);
          if ((c & 0xC0) != 0x80) n += c >= 0xF0 ? 2 : 1;  // not a continuation byte
        }
        return n;
      };
      out.range.start.character = units(at);
      out.range.end = {out.range.start.line, units(end)};
    } else {
      out.range.end = out.range.start;
    }
    return out;
  }

  // ---- queries ---------------------------------------------------------------------------------
  const Occurrence* at(uint32_t offset) const {
    auto it = std::upper_bound(occ.begin(), occ.end(), offset, [](uint32_t o, const Occurrence& x) { return o < x.begin; });
    // the occurrence that starts at or before offset and covers it (the cursor just after a name counts)
    while (it != occ.begin()) {
      --it;
      if (offset >= it->begin && offset <= it->end) return &*it;
      if (it->end < offset) break;
    }
    return nullptr;
  }

  std::string func_signature(const FuncDecl& f) const {
    std::string s = std::string(func_keyword(f.kind)) + " " + f.name + "(";
    for (size_t p = 0; p < f.params.size(); ++p) {
      if (p) s += ", ";
      s += f.params[p].name + ": " + (p < f.locals.size() ? type_name(f.locals[p].type) : "?");
    }
    s += ")";
    if (f.result_type && f.result_type->kind != TypeKind::Void) s += " -> " + type_name(f.result_type);
    return s;
  }

  std::string list_text(const ListDecl& d) const {
    std::string s = "list " + d.name + ": " + (d.resolved ? type_name(d.resolved) : "?");
    const pure::Type* row = d.resolved ? d.resolved->element : nullptr;
    if (row && row->kind == TypeKind::Item) s += "\nrow: {" + fields_text(row, 0) + "}";
    else if (row) s += "\nrow: " + type_name(row);
    return s;
  }

  std::string item_text(const ItemDecl& d) const {
    if (d.is_alias) return "type " + d.name + " = " + (d.resolved ? type_name(d.resolved) : "?");
    if (d.is_enum) {
      std::string members;
      for (const std::string& m : d.members) members += (members.empty() ? "" : ", ") + m;
      return "enum " + d.name + " { " + members + " }";
    }
    return "type " + d.name + " { " + fields_text(d.resolved, 0) + " }";
  }

  std::string const_text(const ConstDecl& c) const {
    std::string s = "const " + c.name;
    if (!c.type) return s;
    s += ": " + type_name(c.type) + " = ";
    switch (c.type->kind) {
      case TypeKind::Int:
        s += c.type->is_enum() ? c.type->name + "." + c.type->members[static_cast<size_t>(c.int_value)] : std::to_string(c.int_value);
        break;
      case TypeKind::Bool: s += c.int_value ? "true" : "false"; break;
      case TypeKind::Num: s += std::to_string(c.num_value); break;
      case TypeKind::Text: s += "\"" + c.text + "\""; break;
      default: s += "?"; break;
    }
    return s;
  }

  std::string describe(const Key& k) const {
    const Module& m = checked.module;
    switch (k.kind) {
      case Key::Local: {
        if (k.a < 0 || k.a >= static_cast<int>(m.funcs.size())) return {};
        const FuncDecl& f = m.funcs[k.a];
        if (k.b < 0 || k.b >= static_cast<int>(f.locals.size())) return {};
        const LocalInfo& l = f.locals[k.b];
        std::string what = k.b < static_cast<int>(f.params.size()) ? "param " : l.is_var ? "var " : "let ";
        return what + l.name + ": " + type_name(l.type);
      }
      case Key::Func: return k.a >= 0 && k.a < static_cast<int>(m.funcs.size()) ? func_signature(m.funcs[k.a]) : "";
      case Key::List: return k.a >= 0 && k.a < static_cast<int>(m.lists.size()) ? list_text(m.lists[k.a]) : "";
      case Key::Type: return k.a >= 0 && k.a < static_cast<int>(m.types.size()) ? item_text(m.types[k.a]) : "";
      case Key::Const: return k.a >= 0 && k.a < static_cast<int>(m.consts.size()) ? const_text(m.consts[k.a]) : "";
      case Key::Field: {
        if (!k.owner) return {};
        int i = k.owner->field_index(k.name);
        if (i < 0) return {};
        return "field " + k.name + ": " + type_name(k.owner->fields[i].type) + "\n(of " + owner_name(k.owner) + ")";
      }
      case Key::Builtin: return builtin_signature(k.a) + "\n(standard library)";
      default: return {};
    }
  }

  // The type of a local's key (null when the key is not a local of a known function).
  const pure::Type* local_type(const Key& k) const {
    const Module& m = checked.module;
    if (k.kind != Key::Local || k.a < 0 || k.a >= static_cast<int>(m.funcs.size())) return nullptr;
    const FuncDecl& f = m.funcs[k.a];
    return k.b >= 0 && k.b < static_cast<int>(f.locals.size()) ? f.locals[k.b].type : nullptr;
  }

  const Occurrence* rename_target(Position pos, std::string* error) const;
  std::string owner_name(const pure::Type* owner) const;

  int enclosing_function(uint32_t offset) const {
    for (size_t i = 0; i < func_spans.size(); ++i)
      if (offset >= func_spans[i].first && offset < func_spans[i].second) return static_cast<int>(i);
    return -1;
  }
};

Document::Document(std::string path, std::string text) : impl_(std::make_unique<Impl>()) {
  impl_->path = std::move(path);
  impl_->text_in = std::move(text);
  impl_->analyse();
}

Document::~Document() = default;

const std::vector<Diag>& Document::diagnostics() const { return impl_->diag_list; }
const std::vector<FileDiag>& Document::imported_diagnostics() const { return impl_->imported_diags; }

bool format_text(const std::string& path, const std::string& text, std::string* out, std::string* error) {
  Source source(path, text);
  Diagnostics diags(source);
  if (format_source(source, diags, out)) return true;
  std::string rendered = diags.render();
  *error = rendered.substr(0, rendered.find('\n'));  // the first error's located line
  if (error->empty()) *error = "the document has a syntax error, so it is not formatted";
  return false;
}

uint32_t Document::offset_of(Position pos) const { return impl_->offset_of(pos); }
Position Document::position_of(uint32_t offset) const { return impl_->position_of(offset); }

std::string Document::hover(Position pos) const {
  const Occurrence* o = impl_->at(impl_->offset_of(pos));
  if (!o) return {};
  std::string d = impl_->describe(o->key);
  if (d.empty()) return {};
  // the first line is code, the rest a note
  size_t nl = d.find('\n');
  std::string out = "```pure\n" + d.substr(0, nl) + "\n```";
  if (nl != std::string::npos) out += "\n" + d.substr(nl + 1);
  return out;
}

bool Document::definition(Position pos, Range& out, std::string* file) const {
  const Occurrence* o = impl_->at(impl_->offset_of(pos));
  if (!o) return false;
  auto it = impl_->declaration.find(o->key);
  if (it == impl_->declaration.end()) return false;
  const Occurrence& d = impl_->occ[it->second];
  if (file) file->clear();
  if (d.begin >= impl_->own_size) {  // declared in an imported file
    if (!file) return false;
    *file = impl_->source->file_of(impl_->source->loc_at(d.begin).line);
    out = impl_->range_in_file(d.begin, d.end);
    return true;
  }
  out = impl_->range_of(d.begin, d.end);
  return true;
}

std::vector<Range> Document::references(Position pos) const {
  std::vector<Range> out;
  const Occurrence* o = impl_->at(impl_->offset_of(pos));
  if (!o) return out;
  Key key = o->key;
  auto it = impl_->declaration.find(key);
  if (it != impl_->declaration.end() && impl_->occ[it->second].begin < impl_->own_size)
    out.push_back(impl_->range_of(impl_->occ[it->second].begin, impl_->occ[it->second].end));
  for (size_t i = 0; i < impl_->occ.size(); ++i) {
    const Occurrence& x = impl_->occ[i];
    if (x.begin >= impl_->own_size) break;  // sorted: the rest is in imported files
    if (x.key == key && (it == impl_->declaration.end() || i != it->second)) out.push_back(impl_->range_of(x.begin, x.end));
  }
  return out;
}

// What can be renamed at pos: a local or parameter, or a field declared in this document whose
// every occurrence is here and belongs to one declaration. Null, with *error saying why, when not.
const Occurrence* Document::Impl::rename_target(Position pos, std::string* error) const {
  const Occurrence* o = at(offset_of(pos));
  if (!o || (o->key.kind != Key::Local && o->key.kind != Key::Field)) {
    *error = "only a local variable, a parameter or a field can be renamed here";
    return nullptr;
  }
  if (o->key.kind == Key::Local) return o;
  const Key& key = o->key;
  auto it = declaration.find(key);
  if (it == declaration.end()) {
    *error = "field '" + key.name + "' is not declared in this module (" +
             (key.owner && !key.owner->name.empty() ? "it is a field of '" + key.owner->name + "'" : "it has no declaration") +
             "), so it cannot be renamed";
    return nullptr;
  }
  for (const Occurrence& x : occ)
    if (x.key == key && x.begin >= own_size) {
      *error = "field '" + key.name + "' is " + (x.is_declaration ? "declared" : "used") + " in an imported file (" +
               source->place(source->loc_at(x.begin)) + "): rename it there and here, as a rename changes this document only";
      return nullptr;
    }
  // Test blocks are not checked here (compile_frontend leaves them out of the module), so what a
  // name in one means is unknown: a field named in a test is not renamed, rather than renamed
  // everywhere but there.
  if (!checked.module.tests.empty()) {
    const Module& m = checked.module;
    std::vector<uint32_t> starts;
    for (const auto& c : m.consts) starts.push_back(c.loc.offset);
    for (const auto& t : m.types) starts.push_back(t.loc.offset);
    for (const auto& l : m.lists) starts.push_back(l.loc.offset);
    for (const auto& f : m.funcs) starts.push_back(f.loc.offset);
    for (const auto& t : m.tests) starts.push_back(t.loc.offset);
    std::sort(starts.begin(), starts.end());
    for (const TestDecl& t : m.tests) {
      auto next = std::upper_bound(starts.begin(), starts.end(), t.loc.offset);
      uint32_t to = std::min(next == starts.end() ? own_size : *next, own_size);
      for (size_t at = text().find(key.name, t.loc.offset); at != std::string::npos && at < to;
           at = text().find(key.name, at + 1)) {
        size_t end = at + key.name.size();
        if ((at == 0 || !ident_char(static_cast<unsigned char>(text()[at - 1]))) &&
            (end >= text().size() || !ident_char(static_cast<unsigned char>(text()[end])))) {
          *error = "field '" + key.name + "' may be used in test \"" + t.name + "\" (line " +
                   std::to_string(position_of(static_cast<uint32_t>(at)).line + 1) +
                   "), which the language server does not check: rename it by hand, or with the tests moved out";
          return nullptr;
        }
      }
    }
  }
  // A keyed list's row type is one type per shape: two stored lists of exactly the same shape
  // share it, and a use (`a.balance` of a row read from either) cannot be told apart.
  std::string owner = owner_name(key.owner);
  if (owner.rfind("stored lists ", 0) == 0) {
    *error = "field '" + key.name + "' cannot be renamed alone: the " + owner +
             " have exactly the same row type, so its uses cannot be told apart (rename it in each list by hand, "
             "or give the lists different fields first)";
    return nullptr;
  }
  return o;
}

// Whose field it is: "stored list 'accounts'" ("stored lists 'a' and 'b'" when they share the row
// type), "'Money'" for an item type, the fields for another list type.
std::string Document::Impl::owner_name(const pure::Type* owner) const {
  std::vector<std::string> lists;
  for (const ListDecl& l : checked.module.lists)
    if (l.resolved && l.resolved->element == owner) lists.push_back("'" + l.name + "'");
  if (lists.size() == 1) return "stored list " + lists[0];
  if (!lists.empty()) {
    std::string s = "stored lists ";
    for (size_t i = 0; i < lists.size(); ++i) s += (i == 0 ? "" : i + 1 == lists.size() ? " and " : ", ") + lists[i];
    return s;
  }
  if (owner && !owner->name.empty()) return "'" + owner->name + "'";
  return "{" + fields_text(owner, 0) + "}";
}

bool Document::prepare_rename(Position pos, Range* out, std::string* error) const {
  const Occurrence* o = impl_->rename_target(pos, error);
  if (!o) return false;
  *out = impl_->range_of(o->begin, o->end);
  return true;
}

std::vector<Range> Document::rename(Position pos, const std::string& new_name, std::string* error) const {
  const Occurrence* o = impl_->rename_target(pos, error);
  if (!o) return {};
  if (new_name.empty() || !ident_start(static_cast<unsigned char>(new_name[0])) ||
      !std::all_of(new_name.begin(), new_name.end(), [](char c) { return ident_char(static_cast<unsigned char>(c)); })) {
    *error = "'" + new_name + "' is not a name (letters, digits and '_', not starting with a digit)";
    return {};
  }
  if (is_keyword(new_name)) {
    *error = "'" + new_name + "' is a keyword";
    return {};
  }
  if (o->key.kind == Key::Field) {
    if (new_name != o->key.name && o->key.owner->field_index(new_name) >= 0) {
      *error = "'" + new_name + "' is already a field of " + impl_->owner_name(o->key.owner);
      return {};
    }
    return references(pos);
  }
  const FuncDecl& f = impl_->checked.module.funcs[o->key.a];
  for (const LocalInfo& l : f.locals)
    if (l.name == new_name) {
      *error = "'" + new_name + "' is already a variable of '" + f.name + "'";
      return {};
    }
  return references(pos);
}

std::vector<Symbol> Document::symbols() const {
  std::vector<Symbol> out;
  const Impl& im = *impl_;
  const Module& m = im.checked.module;
  auto declared = [&](Key key, uint32_t keyword, const std::string& name, SymbolKind kind, std::string detail) {
    auto it = im.declaration.find(key);
    if (it == im.declaration.end()) return;
    const Occurrence& d = im.occ[it->second];
    if (d.begin >= im.own_size) return;  // declared in an imported file
    Symbol s{name, std::move(detail), kind, im.range_of(std::min(keyword, d.begin), d.end), im.range_of(d.begin, d.end), {}};
    out.push_back(std::move(s));
  };
  auto field_children = [&](const pure::Type* owner) {
    std::vector<Symbol> kids;
    if (!owner) return kids;
    for (const FieldInfo& f : owner->fields) {
      auto it = im.declaration.find(Key{Key::Field, -1, -1, owner, f.name});
      if (it == im.declaration.end()) continue;
      const Occurrence& d = im.occ[it->second];
      kids.push_back({f.name, type_name(f.type), SymbolKind::Field, im.range_of(d.begin, d.end), im.range_of(d.begin, d.end), {}});
    }
    return kids;
  };
  for (size_t i = 0; i < m.consts.size(); ++i)
    declared({Key::Const, static_cast<int>(i)}, m.consts[i].loc.offset, m.consts[i].name, SymbolKind::Constant,
             im.const_text(m.consts[i]));
  for (size_t i = 0; i < m.types.size(); ++i) {
    size_t before = out.size();
    declared({Key::Type, static_cast<int>(i)}, m.types[i].loc.offset, m.types[i].name, SymbolKind::Struct, im.item_text(m.types[i]));
    if (out.size() > before && !m.types[i].is_alias && !m.types[i].is_enum) out.back().children = field_children(m.types[i].resolved);
  }
  for (size_t i = 0; i < m.lists.size(); ++i) {
    size_t before = out.size();
    declared({Key::List, static_cast<int>(i)}, m.lists[i].loc.offset, m.lists[i].name, SymbolKind::Array,
             m.lists[i].resolved ? type_name(m.lists[i].resolved) : "");
    const pure::Type* row = m.lists[i].resolved ? m.lists[i].resolved->element : nullptr;
    if (out.size() > before && row && row->kind == TypeKind::Item) out.back().children = field_children(row);
  }
  for (size_t i = 0; i < m.funcs.size(); ++i) {
    const FuncDecl& f = m.funcs[i];
    declared({Key::Func, static_cast<int>(i)}, f.loc.offset, f.name, f.kind == FuncKind::Event ? SymbolKind::Event : SymbolKind::Function,
             im.func_signature(f));
    if (!out.empty() && out.back().name == f.name && i < im.func_spans.size()) {
      // the whole body, so that an editor's outline follows the cursor
      Symbol& s = out.back();
      uint32_t end = im.func_spans[i].second;
      while (end > im.func_spans[i].first && (im.text()[end - 1] == '\n' || im.text()[end - 1] == ' ')) --end;
      s.range = im.range_of(f.loc.offset, std::max(end, im.offset_of(s.selection.end)));
    }
  }
  std::sort(out.begin(), out.end(), [&](const Symbol& a, const Symbol& b) {
    return std::tie(a.range.start.line, a.range.start.character) < std::tie(b.range.start.line, b.range.start.character);
  });
  return out;
}

std::vector<Completion> Document::completion(Position pos) const {
  const Impl& im = *impl_;
  const Module& m = im.checked.module;
  const std::string& t = im.text();
  std::vector<Completion> out;
  uint32_t offset = im.offset_of(pos);
  uint32_t word = offset;
  while (word > 0 && ident_char(static_cast<unsigned char>(t[word - 1]))) --word;
  int fi = im.enclosing_function(offset);

  auto methods = [&](BuiltinKind kind) {
    for (int i = 0; i < static_cast<int>(Builtin::Count); ++i)
      if (builtin_info(static_cast<Builtin>(i)).kind == kind)
        out.push_back({builtin_info(static_cast<Builtin>(i)).name, builtin_signature(i), CompletionKind::Method});
  };
  auto fields = [&](const pure::Type* item) {
    if (!item || item->kind != TypeKind::Item) return;
    for (const FieldInfo& f : item->fields) out.push_back({f.name, type_name(f.type), CompletionKind::Field});
  };
  // The local declared last before offset in the enclosing function with this name.
  auto local_type = [&](const std::string& name) -> const pure::Type* {
    if (fi < 0) return nullptr;
    const pure::Type* found = nullptr;
    for (const Occurrence& o : im.occ)
      if (o.is_declaration && o.key.kind == Key::Local && o.key.a == fi && o.begin < offset &&
          t.compare(o.begin, o.end - o.begin, name) == 0 && name.size() == o.end - o.begin)
        found = im.local_type(o.key);
    return found;
  };

  if (word > 0 && t[word - 1] == '.') {
    // after `NAME.`: the fields and methods of what NAME is
    uint32_t dot = word - 1, name_end = dot;
    while (name_end > 0 && (t[name_end - 1] == ' ' || t[name_end - 1] == '\t')) --name_end;
    uint32_t name_begin = name_end;
    while (name_begin > 0 && ident_char(static_cast<unsigned char>(t[name_begin - 1]))) --name_begin;
    std::string name = t.substr(name_begin, name_end - name_begin);
    // what the tree says is at the dot (a complete `x.f`), else what the name is
    const pure::Type* type = nullptr;
    if (const Occurrence* o = im.at(name_end); o && o->end == name_end) {
      if (o->key.kind == Key::Local) type = im.local_type(o->key);
      else if (o->key.kind == Key::List && o->key.a < static_cast<int>(m.lists.size())) type = m.lists[o->key.a].resolved;
      else if (o->key.kind == Key::Field && o->key.owner) {
        int i = o->key.owner->field_index(o->key.name);
        if (i >= 0) type = o->key.owner->fields[i].type;
      }
    }
    if (!type) type = local_type(name);
    if (!type)
      if (int li = im.find_list(name); li >= 0) type = m.lists[li].resolved;
    if (type) {
      if (type->kind == TypeKind::Item) fields(type);
      else if (type->kind == TypeKind::Text) methods(BuiltinKind::TextMethod);
      else if (type->is_list()) methods(BuiltinKind::ListMethod);
    }
    return out;
  }

  for (const char* k : kKeywords) out.push_back({k, "keyword", CompletionKind::Keyword});
  for (const char* ty : {"int", "num", "bool", "text", "outcome"}) out.push_back({ty, "type", CompletionKind::Struct});
  for (const ListDecl& l : m.lists) out.push_back({l.name, l.resolved ? type_name(l.resolved) : "stored list", CompletionKind::Variable});
  for (const ItemDecl& d : m.types) out.push_back({d.name, im.item_text(d), CompletionKind::Struct});
  for (const ConstDecl& c : m.consts) out.push_back({c.name, im.const_text(c), CompletionKind::Constant});
  for (const FuncDecl& f : m.funcs)
    if (!f.duplicate && f.kind != FuncKind::Main)
      out.push_back({f.name, im.func_signature(f), f.kind == FuncKind::Event ? CompletionKind::Event : CompletionKind::Function});
  for (int i = 0; i < static_cast<int>(Builtin::Count); ++i)
    if (builtin_info(static_cast<Builtin>(i)).kind == BuiltinKind::Function)
      out.push_back({builtin_info(static_cast<Builtin>(i)).name, builtin_signature(i), CompletionKind::Function});
  if (fi >= 0) {
    std::map<std::string, const pure::Type*> seen;  // the latest declaration of each name before the cursor
    for (const Occurrence& o : im.occ)
      if (o.is_declaration && o.key.kind == Key::Local && o.key.a == fi && o.begin < word)
        seen[t.substr(o.begin, o.end - o.begin)] = im.local_type(o.key);
    for (const auto& [name, type] : seen) out.push_back({name, type_name(type), CompletionKind::Variable});
  }
  return out;
}

}  // namespace pure::lsp
