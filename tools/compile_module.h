// tools/compile_module.h — the compile step the command-line tools share (pure-run, pure-serve):
// a module's source through the frontend, lowering and loading, with each stage's errors written
// to stderr the one way both tools print them. Linked as pure_tool_support (tools/CMakeLists.txt).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "frontend/frontend.h"
#include "ir/ir.h"
#include "vm/vm.h"

namespace pure::tools {

// Optional looks at the stages as each is reached (pure-run's --dump-ast and --dump-ir;
// pure-serve keeps the stored lists' column names).
struct CompileSteps {
  std::function<void(const CheckedModule&)> checked;  // after the frontend, when it found no error
  std::function<void(const ir::Program&)> lowered;    // after lowering, when no limit was reached
  int run_test = -1;  // pure-run --test: compile the module's test of this index as its main
  // The files of a text resolve_module made (ResolvedModule::files): diagnostics name them.
  std::vector<std::pair<uint32_t, std::string>> files;
  // An upgrade's migration (frontend.h, compile_frontend): the old version's lists, so that the
  // migrate block is checked and compiled (the last function, "migrate").
  const std::vector<OldList>* old_lists = nullptr;
};

// Resolves the `use` lines of the module at `path` (frontend.h, resolve_imports), reading the
// imported files from disk: *text becomes the module's whole text (what runs, and what a data
// directory keeps as its version) and steps->files says which lines are whose. False with the
// errors in *errors (a file that cannot be read, a cycle, an error inside an imported file).
bool resolve_module(const std::string& path, std::string* text, CompileSteps* steps, std::string* errors);

// A place in the text resolve_module made, "FILE:LINE:COL" in the file the line came from (files:
// CompileSteps::files): the import map, one for pure-run's messages and pure-serve's replies.
std::function<std::string(Loc)> place_in_files(const std::string& path,
                                               const std::vector<std::pair<uint32_t, std::string>>& files);

// A runtime error of the module at `path` as pure-run prints it, each place (the error's and each
// caller's) in its own file and line when the module has imports (files: CompileSteps::files).
std::string render_failure(const vm::RuntimeError& error, const std::string& path,
                           const std::vector<std::pair<uint32_t, std::string>>& files);

// Compiles `text` as the module at `path`. The first stage that fails writes its errors to stderr
// and null is returned: the frontend's diagnostics as rendered; an implementation limit met in
// lowering as a diagnostic at its place; a load error as "PATH:1:1: error: MESSAGE".
std::unique_ptr<vm::Program> compile_or_report(const std::string& path, std::string text, const CompileSteps& steps = {});
// The same, with the messages returned in *errors instead of written to stderr.
std::unique_ptr<vm::Program> compile_to(const std::string& path, std::string text, const CompileSteps& steps,
                                        std::string* errors);

}  // namespace pure::tools
