// tools/compile_module.cpp — see compile_module.h.
#include "tools/compile_module.h"

#include <cstdio>
#include <memory>
#include <utility>

namespace pure::tools {

bool resolve_module(const std::string& path, std::string* text, CompileSteps* steps, std::string* errors) {
  ResolvedModule resolved;
  if (!resolve_imports(path, *text, read_source_file, &resolved, errors)) return false;
  *text = std::move(resolved.text);
  steps->files = std::move(resolved.files);
  return true;
}

std::string render_failure(const vm::RuntimeError& error, const std::string& path,
                           const std::vector<std::pair<uint32_t, std::string>>& files) {
  if (files.empty()) return error.render(path);
  return error.render(place_in_files(path, files));
}

std::function<std::string(Loc)> place_in_files(const std::string& path,
                                               const std::vector<std::pair<uint32_t, std::string>>& files) {
  auto lines = std::make_shared<Source>(path, "");  // only its map of lines to files
  for (const auto& [line, file] : files) lines->add_file(line, file);
  return [lines](Loc at) { return lines->place(at) + ":" + std::to_string(at.col); };
}

std::unique_ptr<vm::Program> compile_or_report(const std::string& path, std::string text, const CompileSteps& steps) {
  std::string errors;
  std::unique_ptr<vm::Program> program = compile_to(path, std::move(text), steps, &errors);
  std::fputs(errors.c_str(), stderr);
  return program;
}

std::unique_ptr<vm::Program> compile_to(const std::string& path, std::string text, const CompileSteps& steps,
                                        std::string* errors) {
  Source source(path, std::move(text));
  for (const auto& [line, file] : steps.files) source.add_file(line, file);
  Diagnostics diags(source);
  CheckedModule checked = compile_frontend(source, diags, steps.run_test, steps.old_lists);
  if (diags.any()) {
    *errors = diags.render();
    return nullptr;
  }
  if (steps.checked) steps.checked(checked);
  ir::Program ir = ir::lower_module(checked, path);
  if (!ir.errors.empty()) {  // an implementation limit, located in the source
    for (const ir::LimitError& e : ir.errors) diags.error(e.loc, e.message, e.hint);
    *errors = diags.render();
    return nullptr;
  }
  if (steps.lowered) steps.lowered(ir);
  std::string error;
  std::unique_ptr<vm::Program> program = vm::load_program(ir, error);
  if (!program) *errors = path + ":1:1: error: " + error + "\n";
  return program;
}

}  // namespace pure::tools
