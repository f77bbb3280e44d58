// frontend/source.cpp — line tables for Source.
#include "frontend/source.h"

#include <algorithm>

namespace pure {

Source::Source(std::string path, std::string text) : path_(std::move(path)), text_(std::move(text)) {
  line_starts_.push_back(0);
  for (uint32_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
}

Loc Source::loc_at(uint32_t offset) const {
  if (offset > text_.size()) offset = static_cast<uint32_t>(text_.size());
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  uint32_t line = static_cast<uint32_t>(it - line_starts_.begin());
  return Loc{offset, line, offset - line_starts_[line - 1] + 1};
}

std::string_view Source::line_text(uint32_t line) const {
  if (line == 0 || line > line_starts_.size()) return {};
  uint32_t start = line_starts_[line - 1];
  uint32_t end = line < line_starts_.size() ? line_starts_[line] - 1 : static_cast<uint32_t>(text_.size());
  std::string_view s(text_.data() + start, end - start);
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  return s;
}

void Source::add_file(uint32_t first_line, std::string path) { files_.push_back({first_line, std::move(path)}); }

const Source::FilePart* Source::part_of(uint32_t line) const {
  const FilePart* found = nullptr;
  for (const FilePart& f : files_)
    if (f.first_line <= line) found = &f;
  return found;
}

const std::string& Source::file_of(uint32_t line) const {
  const FilePart* f = part_of(line);
  return f ? f->path : path_;
}

uint32_t Source::line_in_file(uint32_t line) const {
  const FilePart* f = part_of(line);
  return f ? line - f->first_line + 1 : line;
}

std::string Source::place(Loc loc) const { return file_of(loc.line) + ":" + std::to_string(line_in_file(loc.line)); }

}  // namespace pure
