// frontend/frontend.h — the frontend's interface: source text in, checked syntax tree out.
// Other layers include only this header from frontend/.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "frontend/ast.h"
#include "frontend/builtins.h"
#include "frontend/diagnostic.h"
#include "frontend/source.h"
#include "frontend/types.h"

namespace pure {

struct CheckedModule {
  Module module;
  std::unique_ptr<TypeTable> types = std::make_unique<TypeTable>();
};

// Parses and checks. On return, diags holds every error found; the module is usable for
// lowering only when !diags.any(). Test blocks are parsed (their syntax errors reported) and kept
// in module.tests, but neither checked nor compiled: they never change what a module runs.
// With run_test >= 0 (`pure-run --test`), the test of that index (module.tests) is checked and
// becomes the module's main, in place of its own main; the other tests stay out.
//
// With old_lists (an upgrade of a data directory: docs/upgrades.md, "Migrations"), a migrate block
// is checked and compiled too: the old version's stored lists are added after the module's own as
// lists named "old.NAME" (only the migrate block can name them, and only read them), and the block
// becomes the last function, an event named "migrate" with no parameters. Without old_lists a
// migrate block is parsed only (Module::has_migrate says it is there).
struct OldList {
  std::string name;
  bool sequence = false;
  uint32_t key_count = 0;
  // Keys first, then fields: name and type ("int", "num", "bool", "text", or an enum column's
  // enum's name in the old source). A sequence of scalars has one column named "".
  std::vector<std::pair<std::string, std::string>> cols;
  // Per column (or empty): an enum column's members in the old source. The column reads as a
  // member of the module's enum of that name when its members begin with these (the same
  // positions mean the same members), else of an enum declared for the block as old.NAME.
  std::vector<std::vector<std::string>> members;
};
CheckedModule compile_frontend(const Source& source, Diagnostics& diags, int run_test = -1,
                               const std::vector<OldList>* old_lists = nullptr);

// Imports (docs/tooling.md, "Imports"). A module with `use "lib.pure"` lines is checked as one text:
// its own text, then each imported file once (the deepest first), each after a comment line naming
// it. That text is what a data directory keeps as the module's version (an imported file changed is
// a changed module). `files` says which lines came from which file, for diagnostics (Source::add_file).
struct ResolvedModule {
  std::string text;
  std::vector<std::pair<uint32_t, std::string>> files;  // first line in text, the file's path
};
// Reads a file for resolve_imports: false with the reason (e.g. "No such file or directory") in *why.
using ReadFile = std::function<bool(const std::string& path, std::string* text, std::string* why)>;
// The ReadFile of the tools and the language server: the file from disk.
bool read_source_file(const std::string& path, std::string* text, std::string* why);
// Resolves the `use` lines of the module `text` at `path` (paths relative to the importing file).
// An imported file may declare types, constants and functions only. False, with every error
// rendered in *errors (each in its own file and line), on a syntax error in an imported file, a
// file that cannot be read, a cycle, a stored list, event, query or main in an imported file, or a
// limit (base/limits.h) passed. A module without `use` comes back as it is, with no files.
// located, when given, gets the same errors one by one with the file each is in (the language
// server shows those of an imported file on that file).
struct ImportError {
  std::string path;  // the file the error is in: the module's own (at a `use`) or an imported one
  Diagnostic diagnostic;
};
bool resolve_imports(const std::string& path, const std::string& text, const ReadFile& read, ResolvedModule* out,
                     std::string* errors, std::vector<ImportError>* located = nullptr);

// The canonical layout of a module's source (`pure-run --fmt`; docs/tooling.md): the same tokens
// and line breaks, with indentation, spaces and blank lines decided, every comment kept. Formatting
// its own result changes nothing. False, with the errors in diags, when the source has a syntax
// error (it is not formatted).
bool format_source(const Source& source, Diagnostics& diags, std::string* out);

// The syntax tree as indented text (for `pure-run --dump-ast`).
std::string dump_ast(const Module& module);

}  // namespace pure
