// tests/ir/ir_support.h — for the IR tests: a module through the frontend's public interface
// (frontend.h), its diagnostics kept for the test's message.
#pragma once

#include <memory>
#include <string>

#include "frontend/frontend.h"

namespace pure::test {

struct Compiled {
  std::unique_ptr<Source> source;
  std::unique_ptr<Diagnostics> diags;
  CheckedModule checked;
  explicit Compiled(const std::string& text, const std::string& path = "t.pure")
      : source(std::make_unique<Source>(path, text)), diags(std::make_unique<Diagnostics>(*source)) {
    checked = compile_frontend(*source, *diags);
  }
  bool ok() const { return !diags->any(); }
  std::string errors() const { return diags->render(); }
};

}  // namespace pure::test
