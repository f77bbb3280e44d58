// tools/module_versions.h — what the tools (pure-run --data, pure-serve) give host::open_versioned:
// a compiled module's stored lists as an upgrade sees them (names, defaults, former names), and
// the code of a version kept in a data directory, compiled from its source with the replay's
// options. Linked as pure_tool_support. See docs/upgrades.md.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "frontend/frontend.h"
#include "host/versions.h"
#include "ir/ir.h"
#include "vm/vm.h"

namespace pure::tools {

// Each stored list's enum columns' enum names (by list name; per column, "" for a non-enum),
// from the checked module: a later migrate block reads them as members of these enums.
using EnumNames = std::map<std::string, std::vector<std::string>>;
EnumNames enum_names_of(const CheckedModule& checked);

// The stored lists of a lowered module, with their column names, defaults, `was` names and the
// names of their enum columns' enums (enums: enum_names_of its checked module).
host::SchemaSpec schema_spec(const ir::Program& ir, const EnumNames& enums = {});

// Replays one logged event of program through vm::call_event with the given options (no output).
host::ApplyEvent replay_apply(const vm::Program& program, vm::RunOptions replay);

// Compiles a version's source (its path for messages: "DIR/version-N.src") into its code: the
// compiler's messages, if any, are the error. The program lives as long as out->keep.
host::Status compile_version(const std::string& path, const std::string& source, const vm::RunOptions& replay,
                             host::VersionCode* out);

// The migrate block of the module `source` at `path` (files: its imports, for the messages'
// places): compiled, when asked, against an old version's lists, and run as one event with the
// options given and the budget run is given (named as --migration-steps). Null when the source
// has no migrate block (has_migrate false).
host::CompileMigration migration_compiler(bool has_migrate, const std::string& path, const std::string& source,
                                          const std::vector<std::pair<uint32_t, std::string>>& files,
                                          vm::RunOptions options);

// A data directory's module name for a source file: its file name without directory and ".pure".
std::string module_name_of(const std::string& path);

}  // namespace pure::tools
