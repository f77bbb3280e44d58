// frontend/source.h — a source file held in memory, and positions inside it.
// Depends on nothing outside the standard library.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pure {

// A place in a source file: byte offset, and 1-based line and column (column counts bytes).
struct Loc {
  uint32_t offset = 0;
  uint32_t line = 0;
  uint32_t col = 0;
  bool known() const { return line != 0; }
};

class Source {
 public:
  Source(std::string path, std::string text);
  const std::string& path() const { return path_; }
  const std::string& text() const { return text_; }
  Loc loc_at(uint32_t offset) const;               // offset -> line/col
  std::string_view line_text(uint32_t line) const;  // without the newline

  // A text made of several files (resolve_imports appends the imported files to the module's):
  // from line `first_line` on, the lines are those of the file `path`, from its line 1. Lines
  // before the first such mark are the source's own. Diagnostics name the file and its line.
  void add_file(uint32_t first_line, std::string path);
  const std::string& file_of(uint32_t line) const;
  uint32_t line_in_file(uint32_t line) const;
  // "FILE:LINE" of a place, for a message that names another place ("first declared at ...").
  std::string place(Loc loc) const;

 private:
  std::string path_;
  std::string text_;
  std::vector<uint32_t> line_starts_;
  struct FilePart {
    uint32_t first_line;
    std::string path;
  };
  std::vector<FilePart> files_;  // ascending first_line
  const FilePart* part_of(uint32_t line) const;
};

}  // namespace pure
