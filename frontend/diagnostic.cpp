// frontend/diagnostic.cpp — rendering diagnostics with the source line and a caret.
#include "frontend/diagnostic.h"

#include <algorithm>

namespace pure {

void Diagnostics::error(Loc loc, std::string message, std::string hint) {
  ++count_;
  if (list_.size() < kMaxShown) list_.push_back({loc, std::move(message), std::move(hint)});
}

// Shows control characters and invalid bytes as '?' so a garbage input cannot mess up a terminal.
static std::string printable_line(std::string_view line) {
  std::string out;
  for (unsigned char c : line) out += (c < 0x20 && c != '\t') || c == 0x7f ? '?' : static_cast<char>(c);
  return out;
}

std::string Diagnostics::render() const {
  std::string out;
  // in source order, whichever pass found them
  std::vector<Diagnostic> sorted = list_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return a.loc.line != b.loc.line ? a.loc.line < b.loc.line : a.loc.col < b.loc.col;
  });
  for (const Diagnostic& d : sorted) {
    out += source_.path() + ":" + std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) +
           ": error: " + d.message + "\n";
    std::string_view line = source_.line_text(d.loc.line);
    if (line.size() <= 400) {
      out += "  " + printable_line(line) + "\n  ";
      for (uint32_t i = 1; i < d.loc.col && i <= line.size(); ++i) out += line[i - 1] == '\t' ? '\t' : ' ';
      out += "^\n";
    }
    if (!d.hint.empty()) out += "  hint: " + d.hint + "\n";
  }
  if (count_ > list_.size())
    out += "... and " + std::to_string(count_ - list_.size()) + " more errors\n";
  return out;
}

}  // namespace pure
