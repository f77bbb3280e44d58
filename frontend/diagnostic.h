// frontend/diagnostic.h — compile errors as values: file, line, column, message, hint.
// Depends on frontend/source.h only.
#pragma once
#include <string>
#include <vector>

#include "base/limits.h"
#include "frontend/source.h"

namespace pure {

struct Diagnostic {
  Loc loc;
  std::string message;
  std::string hint;  // optional "did you mean ..." or advice
};

// Collects diagnostics of one compilation. Stops collecting past a limit so that a garbage
// input cannot flood the terminal; the count stays exact.
class Diagnostics {
 public:
  explicit Diagnostics(const Source& source) : source_(source) {}
  void error(Loc loc, std::string message, std::string hint = {});
  bool any() const { return count_ > 0; }
  size_t count() const { return count_; }
  const std::vector<Diagnostic>& list() const { return list_; }
  // FILE:LINE:COL: error: MESSAGE, the source line, a caret, and the hint.
  std::string render() const;
  const Source& source() const { return source_; }

 private:
  const Source& source_;
  std::vector<Diagnostic> list_;
  size_t count_ = 0;
};

// Thrown to abandon a compilation that cannot go on (too deeply nested, too many errors).
struct CompileAbort {};

}  // namespace pure
