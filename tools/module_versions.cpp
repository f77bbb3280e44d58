// tools/module_versions.cpp — see module_versions.h.
#include "tools/module_versions.h"

#include "host/host.h"
#include "tools/compile_module.h"

namespace pure::tools {

EnumNames enum_names_of(const CheckedModule& checked) {
  EnumNames out;
  for (const ListDecl& l : checked.module.lists) {
    if (!l.resolved || !l.resolved->element) continue;
    const Type* e = l.resolved->element;
    std::vector<std::string>& names = out[l.name];
    if (e->kind == TypeKind::Item)
      for (const FieldInfo& f : e->fields) names.push_back(f.type && !f.type->members.empty() ? f.type->name : "");
    else
      names.push_back(!e->members.empty() ? e->name : "");
  }
  return out;
}

host::SchemaSpec schema_spec(const ir::Program& ir, const EnumNames& enums) {
  host::SchemaSpec out;
  for (const ir::ListDesc& d : ir.stored) {
    auto named = enums.find(d.name);
    host::ListSpec l;
    l.name = d.name;
    l.was = d.was;
    l.sequence = d.sequence;
    l.key_count = d.key_count;
    for (size_t c = 0; c < d.cols.size(); ++c) {
      host::ColumnSpec col;
      col.name = c < d.names.size() ? d.names[c] : "";
      col.was = c < d.was_names.size() ? d.was_names[c] : "";
      col.type = d.cols[c];
      if (c < d.members.size()) col.members = d.members[c];
      if (!col.members.empty() && named != enums.end() && c < named->second.size()) col.enum_name = named->second[c];
      if (c >= d.key_count && c - d.key_count < d.defaults.size()) {
        uint64_t bits = d.defaults[c - d.key_count];
        if (col.type == rt::ColType::Text) {
          if (bits < ir.texts.size()) col.default_text = ir.texts[bits];
        } else {
          col.default_bits = bits;
        }
      }
      l.cols.push_back(std::move(col));
    }
    out.push_back(std::move(l));
  }
  return out;
}

host::ApplyEvent replay_apply(const vm::Program& program, vm::RunOptions replay) {
  replay.write_output = [](std::string_view) {};
  return [&program, replay](rt::Store& store, const host::LogRecord& record) -> std::string {
    if (record.event >= program.functions.size() || program.functions[record.event].kind != FuncKind::Event)
      return "no event with index " + std::to_string(record.event);
    std::vector<vm::Value> args;
    if (host::Status s = host::decode_values(record.args, &args); !s.ok()) return s.error;
    vm::CallResult r = vm::call_event(program, store, record.event, args, replay);
    if (r.ok) return "";
    return !r.reason.empty() ? r.reason : r.error ? r.error->message : "the event failed";
  };
}

namespace {

// An old version's lists as a migrate block reads them (frontend.h, OldList).
std::vector<OldList> old_lists_of(const host::SchemaSpec& from) {
  std::vector<OldList> out;
  for (const host::ListSpec& l : from) {
    OldList o;
    o.name = l.name;
    o.sequence = l.sequence;
    o.key_count = l.key_count;
    for (const host::ColumnSpec& c : l.cols) {
      std::string type = c.type == rt::ColType::Num ? "num" : c.type == rt::ColType::Bool ? "bool"
                         : c.type == rt::ColType::Text ? "text" : "int";
      if (!c.members.empty() && !c.enum_name.empty()) type = c.enum_name;  // read as its old enum's member
      o.cols.emplace_back(c.name, type);
      o.members.push_back(c.enum_name.empty() ? std::vector<std::string>{} : c.members);
    }
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace

host::CompileMigration migration_compiler(bool has_migrate, const std::string& path, const std::string& source,
                                          const std::vector<std::pair<uint32_t, std::string>>& files,
                                          vm::RunOptions options) {
  if (!has_migrate) return nullptr;
  options.write_output = nullptr;  // set per run: what the block prints goes to run's `printed`
  options.steps_option = "--migration-steps";
  return [path, source, files, options](const host::SchemaSpec& from, host::Migration* out) -> host::Status {
    std::vector<OldList> old = old_lists_of(from);
    CompileSteps steps;
    steps.files = files;
    steps.old_lists = &old;
    steps.checked = [out](const CheckedModule& checked) { out->reads = checked.module.migrate_reads; };
    std::string errors;
    std::shared_ptr<vm::Program> program = compile_to(path, source, steps, &errors);
    if (!program) return host::Status::failure(errors.empty() ? "it does not compile" : errors);
    int index = vm::find_function(*program, "migrate");
    if (index < 0 || program->functions[static_cast<size_t>(index)].kind != FuncKind::Event)
      return host::Status::failure(path + ": the migrate block was not compiled");
    out->keep = program;
    out->run = [program, index, options, path](rt::Store& both, uint64_t max_steps, std::string* printed) -> std::string {
      vm::RunOptions budgeted = options;
      budgeted.max_steps = max_steps;
      budgeted.write_output = [printed](std::string_view text) {
        if (printed) printed->append(text);
      };
      vm::CallResult r = vm::call_event(*program, both, static_cast<uint32_t>(index), {}, budgeted);
      if (r.ok) return "";
      return path + ": " + (!r.reason.empty() ? r.reason : r.error ? r.error->message : "the migrate block failed");
    };
    return {};
  };
}

host::Status compile_version(const std::string& path, const std::string& source, const vm::RunOptions& replay,
                             host::VersionCode* out) {
  host::SchemaSpec schema;
  bool has_migrate = false;
  CompileSteps steps;
  EnumNames enums;
  steps.checked = [&has_migrate, &enums](const CheckedModule& checked) {
    has_migrate = checked.module.has_migrate;
    enums = enum_names_of(checked);
  };
  steps.lowered = [&schema, &enums](const ir::Program& ir) { schema = schema_spec(ir, enums); };
  std::string errors;
  std::shared_ptr<vm::Program> program = compile_to(path, source, steps, &errors);
  if (!program) return host::Status::failure(errors.empty() ? "it does not compile" : errors);
  out->schema = std::move(schema);
  out->apply = replay_apply(*program, replay);
  out->keep = program;
  out->migration = migration_compiler(has_migrate, path, source, {}, replay);
  return {};
}

std::string module_name_of(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".pure") == 0) name.resize(name.size() - 5);
  return name;
}

}  // namespace pure::tools
