// frontend/diagnostic.cpp — rendering diagnostics with the source line and a caret.
#include "frontend/diagnostic.h"

#include <algorithm>

namespace pure {

void Diagnostics::error(Loc loc, std::string message, std::string hint) {
  ++count_;
  if (list_.size() < limits::kErrorsShown) list_.push_back({loc, std::move(message), std::move(hint)});
}

// Shows control characters and invalid bytes as '?' so a garbage input cannot mess up a terminal.
static std::string printable_line(std::string_view line) {
  std::string out;
  for (unsigned char c : line) out += (c < 0x20 && c != '\t') || c == 0x7f ? '?' : static_cast<char>(c);
  return out;
}

// Lines longer than this are shown as a window of this many bytes around the spot.
static constexpr size_t kLongLine = 160;

std::string Diagnostics::render() const {
  std::string out;
  // in source order, whichever pass found them
  std::vector<Diagnostic> sorted = list_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return a.loc.line != b.loc.line ? a.loc.line < b.loc.line : a.loc.col < b.loc.col;
  });
  for (const Diagnostic& d : sorted) {
    out += source_.file_of(d.loc.line) + ":" + std::to_string(source_.line_in_file(d.loc.line)) + ":" + std::to_string(d.loc.col) +
           ": error: " + d.message + "\n";
    std::string_view line = source_.line_text(d.loc.line);
    // A long line is shown as a window around the spot, cut at character boundaries.
    size_t at = std::min<size_t>(d.loc.col > 0 ? d.loc.col - 1 : 0, line.size());
    size_t from = 0, to = line.size();
    if (line.size() > kLongLine) {
      from = at > kLongLine / 4 ? at - kLongLine / 4 : 0;
      to = std::min(line.size(), from + kLongLine);
      auto continuation = [&](size_t i) { return i < line.size() && (static_cast<unsigned char>(line[i]) & 0xC0) == 0x80; };
      while (from > 0 && continuation(from)) --from;
      while (to < line.size() && continuation(to)) --to;
    }
    std::string before = from > 0 ? "..." : "", after = to < line.size() ? "..." : "";
    out += "  " + before + printable_line(line.substr(from, to - from)) + after + "\n  " + std::string(before.size(), ' ');
    for (size_t i = from; i < at; ++i) out += line[i] == '\t' ? '\t' : ' ';
    out += "^\n";
    if (!d.hint.empty()) out += "  hint: " + d.hint + "\n";
  }
  if (count_ > list_.size())
    out += "... and " + std::to_string(count_ - list_.size()) + " more errors\n";
  return out;
}

}  // namespace pure
