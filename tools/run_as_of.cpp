// tools/run_as_of.cpp — `pure-run --data DIR --as-of SEQ FILE` (run_as_of.h): the directory's
// versions read, FILE checked to be the running one, the state as of SEQ built by
// host::read_state_as_of in memory; pure_run.cpp then runs main on it as on a fresh store.
#include "tools/run_as_of.h"

#include <cstdio>
#include <filesystem>

#include "host/as_of.h"
#include "host/backup.h"
#include "host/host.h"
#include "tools/module_versions.h"
#include "tools/run_data.h"
#include "tools/run_events.h"

namespace pure::tools {

namespace {

int data_error(const std::string& dir, const std::string& message) {
  std::fprintf(stderr, "pure-run: --data %s: %s\n", dir.c_str(), message.c_str());
  return kExitData;
}

}  // namespace

namespace {

// The directory's versions and each version's code (FILE's for the running one); 0 or the exit code.
struct DirectoryCode {
  std::vector<host::VersionFile> versions;
  std::vector<std::unique_ptr<host::VersionCode>> codes;
  host::AsOfCode code;
};

int directory_code(const vm::Program& program, const std::string& path, const AsOfRun& options, const char* what,
                   DirectoryCode* out) {
  const std::string& dir = options.dir;
  const std::string module = module_name_of(path);
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return data_error(dir, std::filesystem::exists(dir, ec) ? "not a directory" : "no such directory");
  std::vector<host::VersionFile>& versions = out->versions;
  if (host::Status s = read_logged_versions(dir, &versions); !s.ok()) return data_error(dir, s.error);
  if (!versions.empty() && versions.front().module != module)
    return data_error(dir, "this data directory belongs to module '" + versions.front().module + "', not to '" +
                                module + "' (a module's name is its file's name without .pure)");
  if (!versions.empty() && versions.back().source != options.source)
    return data_error(dir, std::string(what) + " reads the directory with FILE's code, so FILE must be the source the "
                           "directory runs now (version " + std::to_string(versions.back().number) +
                           "), and " + path + " differs from it (pure-run --data DIR --plan FILE shows how)");
  vm::RunOptions replay;
  replay.max_steps = INT64_MAX;
  out->codes.resize(versions.size() + 2);
  host::AsOfCode& code = out->code;
  code.versions = versions;
  code.module_identity = versions.empty() ? host::module_identity(program) : versions.front().identity;
  code.present_in = versions.empty() ? 0 : versions.back().number;
  code.version_code = [&program, &path, &options, out, replay, dir](uint32_t number,
                                                                   const host::VersionCode** result) -> host::Status {
    const std::vector<host::VersionFile>& versions = out->versions;
    bool running = versions.empty() ? number == 1 : number == versions.back().number;
    if (number == 0 || (!running && number > versions.size()))
      return host::Status::failure(dir + ": the log names version " + std::to_string(number) + ", which has no " +
                                   host::version_file_name(number));
    if (!out->codes[number]) {
      auto c = std::make_unique<host::VersionCode>();
      if (running) {
        c->schema = options.schema;
        c->apply = replay_apply(program, replay);
        // Its migrate block, as the upgrade ran it: without it the rows of a changed column
        // were carried over unconverted (an int's bits read as a num)
        c->migration = migration_compiler(options.has_migrate, path, options.source, options.files, replay);
      } else if (host::Status s = compile_version(dir + "/" + host::version_file_name(number),
                                                  versions[number - 1].source, replay, c.get());
                 !s.ok()) {
        return s;
      }
      out->codes[number] = std::move(c);
    }
    *result = out->codes[number].get();
    return {};
  };
  return 0;
}

}  // namespace

int load_as_of(const vm::Program& program, const std::string& path, const AsOfRun& options,
               std::unique_ptr<rt::Store>* store) {
  DirectoryCode d;
  if (int code = directory_code(program, path, options, "--as-of", &d); code != 0) return code;
  host::AsOfState state;
  host::AsOfProblem problem = host::AsOfProblem::None;
  if (host::Status s = host::read_state_as_of(host::posix_file_system(), options.dir, options.sequence, UINT64_MAX,
                                              d.code, &state, &problem);
      !s.ok())
    return data_error(options.dir, "--as-of " + std::to_string(options.sequence) + ": " + s.error);
  *store = std::move(state.store);
  return 0;
}

int verify_data(const vm::Program& program, const std::string& path, const AsOfRun& options) {
  DirectoryCode d;
  if (int code = directory_code(program, path, options, "--verify", &d); code != 0) return code;
  host::VerifyReport report;
  host::Status s = host::verify_directory(host::posix_file_system(), options.dir, d.code, &report);
  for (const std::string& line : report.lines) std::printf("%s: %s\n", options.dir.c_str(), line.c_str());
  std::fflush(stdout);
  if (!s.ok()) return data_error(options.dir, "--verify: damaged: " + s.error);
  std::printf("%s: verified\n", options.dir.c_str());
  return 0;
}

int restore_data(const vm::Program& program, const std::string& path, const AsOfRun& options) {
  DirectoryCode d;
  if (int code = directory_code(program, path, options, "--restore-to", &d); code != 0) return code;
  std::unique_ptr<host::DataDirLock> lock;
  if (host::Status s = host::lock_data_dir(options.dir, "pure-run --restore-to", &lock); !s.ok())
    return data_error(options.dir, s.error);
  host::CopyReport report;
  host::CopyProblem problem = host::CopyProblem::None;
  std::string before;
  host::Status s = host::restore_data_dir_to(host::posix_file_system(), options.dir, options.sequence, &report, &before,
                                             &problem);
  lock.reset();
  if (!s.ok()) return data_error(options.dir, "--restore-to " + std::to_string(options.sequence) + ": " + s.error);
  if (before.empty()) {
    std::printf("%s: already at sequence %llu: nothing to cut\n", options.dir.c_str(),
                static_cast<unsigned long long>(options.sequence));
    return 0;
  }
  std::printf("%s: restored to sequence %llu (checkpoint %llu, %llu files: %llu linked, %llu copied, %.3f s); the "
              "directory as it was is %s\n",
              options.dir.c_str(), static_cast<unsigned long long>(report.sequence),
              static_cast<unsigned long long>(report.checkpoint), static_cast<unsigned long long>(report.files),
              static_cast<unsigned long long>(report.linked), static_cast<unsigned long long>(report.copied),
              report.seconds, before.c_str());
  return 0;
}

}  // namespace pure::tools
