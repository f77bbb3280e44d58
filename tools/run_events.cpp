// tools/run_events.cpp — `pure-run --data DIR --events FILE` (run_events.h): the directory's
// versions read (host::read_versions), the running version's code chosen, the filters checked
// with the HTTP route's messages, then the records read a page at a time (host::read_history)
// and each printed as serve/history.h renders it, so memory stays bounded by one page.
#include "tools/run_events.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "base/limits.h"
#include "host/history.h"
#include "host/host.h"
#include "host/versions.h"
#include "serve/history.h"
#include "tools/compile_module.h"
#include "tools/module_versions.h"
#include "tools/run_data.h"

namespace pure::tools {

namespace {

constexpr int kExitUsage = 2;

// "pure-run: --data DIR: MESSAGE", as pure-run --data says what is wrong with a directory.
int data_error(const std::string& dir, const std::string& message) {
  std::fprintf(stderr, "pure-run: --data %s: %s\n", dir.c_str(), message.c_str());
  return kExitData;
}

}  // namespace

// True when the log holds version v's upgrade record: a version file whose record never became
// durable (a crash during the upgrade) is not a version yet; the next recovery deletes it.
static bool upgrade_logged(const std::string& dir, const host::VersionFile& v, host::Status* status) {
  host::HistoryFilter probe;
  probe.after = v.begins - 1;
  probe.before = v.begins + 1;
  probe.limit = 1;
  host::HistoryPage page;
  *status = host::read_history(host::posix_file_system(), dir, 0, probe, &page);
  return status->ok() && !page.records.empty() && page.records[0].sequence == v.begins &&
         page.records[0].event == host::kVersionEvent;
}

host::Status read_logged_versions(const std::string& dir, std::vector<host::VersionFile>* versions) {
  if (host::Status s = host::read_versions(host::posix_file_system(), dir, versions); !s.ok())
    return host::Status::failure("reading its versions: " + s.error);
  if (!versions->empty() && versions->back().begins) {
    host::Status s;
    if (!upgrade_logged(dir, versions->back(), &s)) {
      if (!s.ok()) return host::Status::failure("reading its history: " + s.error);
      versions->pop_back();
    }
  }
  return {};
}

int print_events(const vm::Program& program, const std::string& path, const std::string& source,
                 const EventsOptions& options) {
  const std::string& dir = options.dir;
  const std::string module = options.module.empty() ? module_name_of(path) : options.module;
  // The filters that need no directory first: a usage error is found before anything is read.
  host::HistoryFilter filter;
  bool has_before = false;
  serve::HistoryCode code;
  code.program = &program;
  for (const auto& [key, value] : options.filters) {
    if (key == "event") continue;
    std::string bad = serve::parse_history_parameter(code, module, key, value, UINT64_MAX, &filter, &has_before);
    if (!bad.empty()) {
      std::fprintf(stderr, "pure-run: --%s\n", bad.c_str());
      return kExitUsage;
    }
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return data_error(dir, std::filesystem::exists(dir, ec) ? "not a directory" : "no such directory");
  std::vector<host::VersionFile> versions;
  if (host::Status s = read_logged_versions(dir, &versions); !s.ok()) return data_error(dir, s.error);
  host::HistoryPage first;  // only its `oldest`: whether the directory holds log segments
  {
    host::HistoryFilter probe;
    probe.before = 1;  // no record wanted: no segment is read
    if (host::Status s = host::read_history(host::posix_file_system(), dir, 0, probe, &first); !s.ok())
      return data_error(dir, "reading its history: " + s.error);
  }
  if (versions.empty() && first.oldest == 0)
    return data_error(dir, "not a data directory: it has no version files and no log segments");
  if (!versions.empty() && versions.front().module != module)
    return data_error(dir, "this data directory belongs to module '" + versions.front().module + "', not to '" +
                                module + "' (a module's name is its file's name without .pure)");
  // The running version's code names the records, as the server running it would: FILE's program
  // when FILE is that version, else the version's kept source compiled.
  std::unique_ptr<vm::Program> kept;
  if (!versions.empty()) {
    const host::VersionFile& running = versions.back();
    code.version = running.number;
    code.version_begins = running.begins;
    if (running.source != source) {
      std::string kept_path = dir + "/" + host::version_file_name(running.number), errors;
      kept = compile_to(kept_path, running.source, {}, &errors);
      if (!kept)
        return data_error(dir, "its version " + std::to_string(running.number) + " (" + kept_path +
                                   ") does not compile with this build:\n" + errors);
      code.program = kept.get();
    }
  }
  code.versions = &versions;
  for (const auto& [key, value] : options.filters) {
    if (key != "event") continue;
    std::string bad = serve::parse_history_parameter(code, module, key, value, UINT64_MAX, &filter, &has_before);
    if (!bad.empty()) {
      std::fprintf(stderr, "pure-run: --%s\n", bad.c_str());
      return kExitUsage;
    }
  }
  if (std::string bad = serve::check_history_range(filter, has_before); !bad.empty()) {
    std::fprintf(stderr, "pure-run: --%s\n", bad.c_str());
    return kExitUsage;
  }
  // A page at a time: at most kHistoryPageRecords records and kHistoryScanBytes of log in memory.
  // Every whole record on disk is read (no owner says which are durable: after a server or a
  // pure-run --data stops, that is every record it committed).
  const bool limited = std::any_of(options.filters.begin(), options.filters.end(),
                                   [](const auto& f) { return f.first == "limit"; });
  uint64_t remaining = limited ? filter.limit : UINT64_MAX;  // without --limit: every record
  filter.max_scan_bytes = limits::kHistoryScanBytes;
  std::string line;
  while (remaining > 0) {
    filter.limit = static_cast<size_t>(std::min<uint64_t>(remaining, limits::kHistoryPageRecords));
    host::HistoryPage page;
    if (host::Status s = host::read_history(host::posix_file_system(), dir, 0, filter, &page); !s.ok()) {
      std::fflush(stdout);
      return data_error(dir, "reading its history: " + s.error);
    }
    for (const host::HistoryRecord& r : page.records) {
      line.clear();
      serve::append_history_record(line, code, r);
      line += '\n';
      std::fwrite(line.data(), 1, line.size(), stdout);
    }
    remaining -= page.records.size();
    if (!page.next_after) break;
    filter.after = page.next_after;
  }
  if (std::fflush(stdout) != 0 || std::ferror(stdout))
    return data_error(dir, "writing the records to standard output failed");
  return 0;
}

}  // namespace pure::tools
