// lsp/analysis.h — what the language server knows about one open document: the frontend's
// diagnostics (and the lowering's limit errors, as `pure-run --check` reports them), and an index
// of every name in the checked tree (declarations, uses, their types) for hover, definition,
// references, rename, symbols and completion. Positions are LSP positions: 0-based lines and
// UTF-16 code units. Depends on frontend/ and ir/ (public headers), no JSON.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace pure::lsp {

struct Position {
  uint32_t line = 0;
  uint32_t character = 0;  // UTF-16 code units
};

struct Range {
  Position start, end;
};

struct Diag {
  Range range;
  std::string message;  // the message, then "hint: ..." on its own line when there is a hint
};

// A diagnostic of a file the document imports: that file's path, and the range in that file.
struct FileDiag {
  std::string path;
  Diag diag;
};

// LSP's SymbolKind numbers for the kinds Pure has.
enum class SymbolKind : int { Field = 8, Function = 12, Variable = 13, Constant = 14, Struct = 23, Event = 24, Array = 18 };

struct Symbol {
  std::string name;
  std::string detail;  // a signature or a type
  SymbolKind kind = SymbolKind::Function;
  Range range;            // the declaration, from its keyword
  Range selection;        // its name
  std::vector<Symbol> children;  // fields of a type or stored list
};

// LSP's CompletionItemKind numbers.
enum class CompletionKind : int { Method = 2, Function = 3, Field = 5, Variable = 6, Keyword = 14, Struct = 22, Constant = 21, Event = 23 };

struct Completion {
  std::string label;
  std::string detail;
  CompletionKind kind = CompletionKind::Keyword;
};

// text (the document at path) in the canonical layout, as `pure-run --fmt` writes it
// (frontend.h, format_source); false, with the first syntax error located in *error, when it has one
// and cannot be formatted.
bool format_text(const std::string& path, const std::string& text, std::string* out, std::string* error);

class Document {
 public:
  // Parses and checks text (the document at path, for messages) and indexes it. Never throws.
  Document(std::string path, std::string text);
  ~Document();
  Document(const Document&) = delete;
  Document& operator=(const Document&) = delete;

  const std::vector<Diag>& diagnostics() const;
  // The errors inside the files the document imports, each in its own file (the document's own
  // diagnostics also show each at its first `use`).
  const std::vector<FileDiag>& imported_diagnostics() const;
  // Markdown for the name at pos, or empty.
  std::string hover(Position pos) const;
  // The declaration of the name at pos; false when there is none (a keyword, a standard function).
  // A declaration in an imported file: with file, *file is that file's path and out a range in it
  // (else false); *file is empty for one in this document.
  bool definition(Position pos, Range& out, std::string* file = nullptr) const;
  // Every occurrence of the name at pos, its declaration first when it has one.
  std::vector<Range> references(Position pos) const;
  // The ranges to replace to rename the local variable, parameter or field at pos; *error says why
  // not (a field of two stored lists of the same shape, one declared or used in an imported file,
  // a new name that is not a name, a keyword, or already a variable of the function or a field of
  // the same item).
  std::vector<Range> rename(Position pos, const std::string& new_name, std::string* error) const;
  // The name at pos when it can be renamed (textDocument/prepareRename); false, *error saying why, if not.
  bool prepare_rename(Position pos, Range* out, std::string* error) const;
  std::vector<Symbol> symbols() const;
  std::vector<Completion> completion(Position pos) const;

  // Offsets and positions of this document's text (a position past a line's end clamps to it).
  uint32_t offset_of(Position pos) const;
  Position position_of(uint32_t offset) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace pure::lsp
