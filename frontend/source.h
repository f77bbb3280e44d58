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

 private:
  std::string path_;
  std::string text_;
  std::vector<uint32_t> line_starts_;
};

}  // namespace pure
