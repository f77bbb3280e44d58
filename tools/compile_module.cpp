// tools/compile_module.cpp — see compile_module.h.
#include "tools/compile_module.h"

#include <cstdio>
#include <utility>

namespace pure::tools {

std::unique_ptr<vm::Program> compile_or_report(const std::string& path, std::string text, const CompileSteps& steps) {
  Source source(path, std::move(text));
  Diagnostics diags(source);
  CheckedModule checked = compile_frontend(source, diags);
  if (diags.any()) {
    std::fputs(diags.render().c_str(), stderr);
    return nullptr;
  }
  if (steps.checked) steps.checked(checked);
  ir::Program ir = ir::lower_module(checked, path);
  if (!ir.errors.empty()) {  // an implementation limit, located in the source
    for (const ir::LimitError& e : ir.errors) diags.error(e.loc, e.message, e.hint);
    std::fputs(diags.render().c_str(), stderr);
    return nullptr;
  }
  if (steps.lowered) steps.lowered(ir);
  std::string error;
  std::unique_ptr<vm::Program> program = vm::load_program(ir, error);
  if (!program) std::fprintf(stderr, "%s:1:1: error: %s\n", path.c_str(), error.c_str());
  return program;
}

}  // namespace pure::tools
