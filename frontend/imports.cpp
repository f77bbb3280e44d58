// frontend/imports.cpp — `use "lib.pure"`: the imported files found, checked for what they may
// declare, and appended to the module's text (frontend.h, resolve_imports; docs/tooling.md).
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "base/limits.h"
#include "frontend/frontend.h"
#include "frontend/parser.h"

namespace pure {
namespace {

// The path a `use` names, relative to the importing file's folder, without "." and "..".
std::string resolve_path(const std::string& importer, const std::string& used) {
  std::filesystem::path p(used);
  if (p.is_relative()) p = std::filesystem::path(importer).parent_path() / p;
  return p.lexically_normal().generic_string();
}

struct File {
  std::string path;
  std::string text;
};

class Resolver {
 public:
  Resolver(const ReadFile& read, std::string* errors, std::vector<ImportError>* located)
      : read_(read), errors_(*errors), located_(located) {}

  // Visits the file and the files it uses, depth first; appends each imported one to done_ after
  // the files it uses. False when an error was reported.
  bool visit(const std::string& path, const std::string& text, bool root) {
    Source source(path, text);
    Diagnostics diags(source);
    Diagnostics ignored(source);  // the module's own syntax errors: reported when it is compiled
    Module m = parse_module(source, root ? ignored : diags);
    if (!root) refuse_state(m, diags);
    chain_.push_back(std::filesystem::path(path).lexically_normal().generic_string());  // "./m.pure" is "m.pure"
    bool ok = !diags.any();
    for (const UseDecl& u : m.uses) {
      if (!ok) break;
      std::string target = resolve_path(path, u.path);
      if (auto at = std::find(chain_.begin(), chain_.end(), target); at != chain_.end()) {
        std::string cycle;
        for (auto it = at; it != chain_.end(); ++it) cycle += *it + " uses ";
        diags.error(u.loc, "import cycle: " + cycle + target, "move what both files need into a third file they both use");
        break;
      }
      if (seen_.count(target)) continue;  // imported already, through another file: once is enough
      if (chain_.size() >= limits::kImportDepth) {
        diags.error(u.loc, "imports nest more than " + std::to_string(limits::kImportDepth) + " files deep",
                    "the limit is in base/limits.h (kImportDepth)");
        break;
      }
      if (seen_.size() >= limits::kImportFiles) {
        diags.error(u.loc, "a module imports more than " + std::to_string(limits::kImportFiles) + " files",
                    "the limit is in base/limits.h (kImportFiles)");
        break;
      }
      std::string imported, why;
      if (!read_(target, &imported, &why)) {
        diags.error(u.loc, "cannot read the imported file '" + target + "'" + (why.empty() ? "" : ": " + why),
                    "the path is relative to the folder of the file with the 'use'");
        break;
      }
      seen_.insert(target);
      if (!visit(target, imported, false)) {
        ok = false;
        break;
      }
    }
    if (diags.any()) ok = false;
    errors_ += diags.render();
    if (located_)
      for (const Diagnostic& d : diags.list()) located_->push_back({path, d});
    chain_.pop_back();
    if (ok && !root) done_.push_back({path, text});
    return ok;
  }

  std::vector<File> done_;

 private:
  // State stays in one module: an imported file brings types, constants and functions only.
  void refuse_state(const Module& m, Diagnostics& diags) {
    const std::string hint = "an imported file may declare types, constants and functions; state and its events belong to the module that uses it";
    for (const ListDecl& l : m.lists) diags.error(l.loc, "stored list '" + l.name + "' in an imported file", hint);
    for (const FuncDecl& f : m.funcs) {
      if (f.kind == FuncKind::Event) diags.error(f.loc, "event '" + f.name + "' in an imported file", hint);
      else if (f.kind == FuncKind::Query) diags.error(f.loc, "query '" + f.name + "' in an imported file", hint);
      else if (f.kind == FuncKind::Main || f.name == "main") diags.error(f.loc, "'main' in an imported file", "the module that uses it has the main");
    }
  }

  const ReadFile& read_;
  std::string& errors_;
  std::vector<ImportError>* located_;
  std::vector<std::string> chain_;
  std::set<std::string> seen_;
};

}  // namespace

bool read_source_file(const std::string& path, std::string* text, std::string* why) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {  // a directory opens, then reads as empty
    *why = "it is a directory";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *why = std::strerror(errno);
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  *text = ss.str();
  return !in.bad();
}

bool resolve_imports(const std::string& path, const std::string& text, const ReadFile& read, ResolvedModule* out,
                     std::string* errors, std::vector<ImportError>* located) {
  out->text = text;
  out->files.clear();
  // Only a module that has a `use` line is parsed here (most have none).
  if (text.find("use") == std::string::npos) return true;
  Resolver r(read, errors, located);
  if (!r.visit(path, text, true)) return false;
  if (r.done_.empty()) return true;
  uint32_t line = 1;
  for (char c : out->text) line += c == '\n';
  if (!out->text.empty() && out->text.back() != '\n') {
    out->text += '\n';
    ++line;
  }
  for (const File& f : r.done_) {
    out->text += "\n// ---- imported: \"" + f.path + "\" ----\n";
    line += 2;
    out->files.push_back({line, f.path});
    out->text += f.text;
    for (char c : f.text) line += c == '\n';
    if (!f.text.empty() && f.text.back() != '\n') {
      out->text += '\n';
      ++line;
    }
  }
  return true;
}

}  // namespace pure
