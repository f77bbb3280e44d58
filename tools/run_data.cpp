// tools/run_data.cpp — `pure-run --data DIR`: see run_data.h and docs/durability.md ("pure-run
// --data"). The promise: everything main prints reaches stdout only once every event committed
// before it (and the event printing it, if it commits) is durable; exit code 0 means every
// committed event is durable; a crash loses a suffix of the committed events, never part of one.
#include "tools/run_data.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <deque>
#include <mutex>

#include "host/host.h"
#include "host/versions.h"
#include "tools/compile_module.h"
#include "base/limits.h"
#include "tools/module_versions.h"

namespace pure::tools {

namespace {

// main's output, held until the events it may depend on are durable. Each chunk carries the
// sequence number that must be durable before it is shown; the log thread releases chunks as it
// acknowledges bursts, main's thread writes straight through when nothing is pending.
class OutputGate {
 public:
  explicit OutputGate(uint64_t durable) : durable_(durable), durable_seen_(durable) {}

  void write(uint64_t needs, std::string_view text) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (held_.empty() && needs <= durable_) {
      std::fwrite(text.data(), 1, text.size(), stdout);
      return;
    }
    if (!held_.empty() && held_.back().first == needs) held_.back().second.append(text);
    else held_.emplace_back(needs, std::string(text));
  }

  // The log thread, after each burst; or once with poisoned set.
  void durable(uint64_t sequence, bool poisoned, const std::string& reason) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (poisoned) {  // nothing after the last acknowledged burst may be shown
      reason_ = reason;
      poisoned_.store(true, std::memory_order_release);
      return;
    }
    durable_ = sequence;
    durable_seen_.store(sequence, std::memory_order_release);
    bool wrote = false;
    while (!held_.empty() && held_.front().first <= durable_) {
      std::fwrite(held_.front().second.data(), 1, held_.front().second.size(), stdout);
      held_.pop_front();
      wrote = true;
    }
    if (wrote) std::fflush(stdout);
  }

  bool poisoned() const { return poisoned_.load(std::memory_order_acquire); }
  std::string reason() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return reason_;
  }
  uint64_t durable_sequence() const { return durable_seen_.load(std::memory_order_acquire); }
  uint64_t held_bytes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    uint64_t n = 0;
    for (const auto& chunk : held_) n += chunk.second.size();
    return n;
  }
  // After a clean close (everything durable): shows what is left.
  void release_all() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& chunk : held_) std::fwrite(chunk.second.data(), 1, chunk.second.size(), stdout);
    held_.clear();
  }

 private:
  mutable std::mutex mutex_;
  uint64_t durable_;
  std::atomic<uint64_t> durable_seen_;
  std::atomic<bool> poisoned_{false};
  std::string reason_;
  std::deque<std::pair<uint64_t, std::string>> held_;
};

// How far main may run ahead of the disk, in records: past it, main waits for the log (memory
// stays bounded when events come faster than the disk takes them).
constexpr uint64_t kMaxLag = 1u << 16;

int data_error(const DataOptions& data, const std::string& message) {
  std::fprintf(stderr, "pure-run: --data %s: %s\n", data.dir.c_str(), message.c_str());
  return kExitData;
}

}  // namespace

int run_with_data(const vm::Program& program, const std::string& path, vm::RunOptions options,
                  const DataOptions& data) {
  host::FileSystem& fs = host::posix_file_system();
  // One process at a time per directory (created, its name durable, if missing): a second pure-run
  // or a pure-serve serving it is refused, named by its pid.
  std::unique_ptr<host::DataDirLock> lock;
  if (host::Status s = host::lock_data_dir(data.dir, "pure-run", &lock); !s.ok()) return data_error(data, s.error);

  // Replay runs each logged event as it ran: it committed within its budgets then, so none here
  // (the memory budget no smaller than the default), and its printing is not shown again
  // (replay_apply drops it).
  vm::RunOptions replay;
  replay.max_steps = INT64_MAX;
  replay.max_memory = std::max<uint64_t>(options.max_memory, vm::RunOptions{}.max_memory);
  replay.engine = options.engine;

  OutputGate* gate_ptr = nullptr;  // set before the log starts; the callback needs it
  host::OpenOptions open;
  open.log.sync = data.sync_always ? host::Sync::Always : host::Sync::None;
  open.log.retain = data.retain;
  open.on_durable = [&gate_ptr](uint64_t sequence, bool poisoned, const std::string& reason) {
    if (gate_ptr) gate_ptr->durable(sequence, poisoned, reason);
  };
  open.accept_data_loss = data.accept_data_loss;
  open.progress = [&data](const host::RecoveryProgress& p) {
    std::fprintf(stderr, "pure-run: --data %s: recovering: %llu records replayed, %.0f of %.0f MiB of log read\n",
                 data.dir.c_str(), static_cast<unsigned long long>(p.records_replayed),
                 static_cast<double>(p.bytes_read) / (1 << 20), static_cast<double>(p.bytes_total) / (1 << 20));
  };
  // The directory keeps every version of the module (docs/upgrades.md): each logged event is
  // replayed by the version that ran it, and a changed source is an upgrade, planned first.
  host::VersionedOptions versioned;
  versioned.module = data.module.empty() ? module_name_of(path) : data.module;
  versioned.source = data.source;
  versioned.code.schema = data.schema;
  versioned.code.apply = replay_apply(program, replay);
  // The migrate block runs at the upgrade under a budget of its own; its replay (a restart after
  // the upgrade, before a checkpoint) runs the same deterministic code again, unbudgeted.
  versioned.code.migration = migration_compiler(data.has_migrate, path, data.source, data.files, replay);
  versioned.migration_steps = data.migration_steps ? data.migration_steps : limits::kMigrationSteps;
  versioned.legacy_identity = host::module_identity(program);
  versioned.compile = [&data, &replay](uint32_t number, const std::string& source, host::VersionCode* out) {
    return compile_version(data.dir + "/" + host::version_file_name(number), source, replay, out);
  };
  versioned.upgrade = data.upgrade;
  versioned.allow_drop = data.allow_drop;
  host::OpenedModule opened;
  host::VersionedReport versions;
  if (host::Status s = host::open_versioned(fs, data.dir, std::move(open), std::move(versioned), &opened, &versions);
      !s.ok()) {
    std::string message = s.error;
    // A migrate block that failed may have printed why: its output is shown, before the error.
    std::fwrite(versions.migration_output.data(), 1, versions.migration_output.size(), stdout);
    std::fflush(stdout);
    if (message.find("the manifest records") != std::string::npos)
      message += "\n  (restore the missing files, or run with --accept-data-loss to continue from what is left)";
    return data_error(data, message);
  }
  if (versions.needs_upgrade || data.plan_only) {
    if (versions.needs_upgrade) {
      std::fprintf(stderr, "pure-run: --data %s: %s differs from version %u of this directory\n%s", data.dir.c_str(),
                   path.c_str(), versions.version, versions.plan.render().c_str());
      if (data.plan_only) return 0;
      std::fprintf(stderr, "pure-run: --data %s: run again with --upgrade to apply this plan%s (or --plan to print it "
                           "and exit)\n",
                   data.dir.c_str(), versions.plan.drops ? " and --allow-drop" : "");
      return kExitData;
    }
    std::fprintf(stderr, "pure-run: --data %s: %s is version %u of this directory: nothing to upgrade\n",
                 data.dir.c_str(), path.c_str(), versions.version);
    if (opened.log) (void)opened.log->close();  // nothing was appended: nothing can fail to be durable
    return 0;
  }
  if (versions.upgraded)
    std::fprintf(stderr, "pure-run: --data %s: upgraded to version %u at sequence %llu in %.3f s\n%s", data.dir.c_str(),
                 versions.version, static_cast<unsigned long long>(versions.version_begins), versions.upgrade_seconds,
                 versions.plan.render().c_str());
  // What the migrate block printed, once its upgrade is durable (a replay of it prints nothing).
  std::fwrite(versions.migration_output.data(), 1, versions.migration_output.size(), stdout);
  const uint64_t identity = versions.history.front().identity;
  const host::RecoveryReport& report = opened.report;
  if (!report.data_loss.empty())
    std::fprintf(stderr, "pure-run: --data %s: warning: data loss accepted (--accept-data-loss): %s\n", data.dir.c_str(),
                 report.data_loss.c_str());
  if (report.manifest_missing)
    std::fprintf(stderr, "pure-run: --data %s: warning: no manifest (a directory from before manifests, or its "
                         "manifest was deleted): nothing could be checked against it; a new one is written\n",
                 data.dir.c_str());
  if (report.torn_bytes_cut)
    std::fprintf(stderr, "pure-run: --data %s: the last run ended in the middle of a write: %llu bytes of a torn "
                         "record cut (that event was never acknowledged)\n",
                 data.dir.c_str(), static_cast<unsigned long long>(report.torn_bytes_cut));
  if (report.seconds >= 1.0)
    std::fprintf(stderr, "pure-run: --data %s: %s\n", data.dir.c_str(), report.summary().c_str());

  rt::Store& store = *opened.store;
  host::EventLog& log = *opened.log;
  OutputGate gate(report.last_sequence);
  gate_ptr = &gate;
  // The log thread may already run; it calls back only after an append, which comes later.
  uint64_t last = report.last_sequence;  // the last sequence appended (main's thread)
  // Committed events wait here, encoded, and go to the log kBatch at a time (one append, one
  // wake-up of the log thread), and before any output is handed to the gate, so an output's
  // sequence is always appended: holding them back delays durability, never what is shown.
  constexpr size_t kBatch = 256;
  // The batch's records, their arguments (and a failed event's reason) encoded back to back into
  // one buffer that keeps its capacity from batch to batch: an event queued allocates nothing.
  struct Queued {
    uint32_t event;
    bool failed;       // an audit-only record; its reason follows its arguments in bytes
    size_t args_end;   // where its arguments end in bytes (they begin where the previous record ends)
    size_t end;        // where the record ends (after a failed event's reason)
  };
  std::vector<Queued> queued;
  std::string bytes;
  std::vector<host::EventIn> batch;
  auto append_batch = [&]() -> std::string {
    if (queued.empty()) return "";
    batch.clear();
    size_t begin = 0;
    for (const Queued& q : queued) {
      std::string_view args(bytes.data() + begin, q.args_end - begin);
      std::string_view reason(bytes.data() + q.args_end, q.end - q.args_end);
      batch.push_back({q.event, args, {}, reason, q.failed});
      begin = q.end;
    }
    uint64_t sequence = log.append(batch);
    queued.clear();
    bytes.clear();
    if (sequence == 0) return log.poisoned() ? log.poison_reason() : "the event log is closed";
    last = sequence;
    if (sequence - gate.durable_sequence() > kMaxLag && !log.wait_durable(sequence - kMaxLag / 2))
      return log.poison_reason();
    return "";
  };
  options.on_commit = [&](uint32_t event, std::span<const vm::Value> args) -> std::string {
    if (gate.poisoned()) return gate.reason();
    host::append_encoded_values(bytes, args);
    queued.push_back({event, false, bytes.size(), bytes.size()});
    return queued.size() >= kBatch ? append_batch() : std::string();
  };
  // A failed event takes the next sequence as an audit-only record (--audit-failed, docs/history.md):
  // replay skips it. A failed append shows at the next commit, output or close.
  if (data.audit_failed)
    options.on_fail = [&](uint32_t event, std::span<const vm::Value> args, std::string_view reason) {
      if (gate.poisoned()) return;
      host::append_encoded_values(bytes, args);
      size_t args_end = bytes.size();
      bytes.append(reason);
      queued.push_back({event, true, args_end, bytes.size()});
      if (queued.size() >= kBatch) (void)append_batch();
    };
  // Output printed inside an event waits for that event's sequence (it is shown only if the
  // event commits and is durable, or once everything is durable at the end); output printed
  // between events waits for the last event before it. (A failed append poisoned the log: the
  // output is then held for good, and the close below reports it.)
  options.write_output = [&](std::string_view text) {
    append_batch();
    gate.write(last + (store.in_event() ? 1 : 0), text);
  };

  std::optional<vm::RuntimeError> failure = vm::run_main(program, store, options);
  append_batch();
  host::Status closed = log.close();  // writes and syncs what is queued
  if (!closed.ok()) {
    std::fflush(stdout);
    uint64_t durable = gate.durable_sequence();
    return data_error(data, closed.error + "\n  events after sequence " + std::to_string(durable) +
                                " are not known to be durable; " + std::to_string(gate.held_bytes()) +
                                " bytes of output that followed them were withheld; run again to recover");
  }
  gate.release_all();
  std::fflush(stdout);
  if (failure) std::fputs(render_failure(*failure, path, data.files).c_str(), stderr);

  // A checkpoint at exit when the log has grown enough since the newest one: the next start
  // loads it instead of replaying those records. The log already holds everything, so a failed
  // checkpoint loses nothing; it is reported and the exit code stays.
  if (data.checkpoint_every && last - report.checkpoint_sequence >= data.checkpoint_every) {
    std::shared_ptr<const rt::Snapshot> snapshot = store.publish();
    if (host::Status s = host::write_checkpoint(fs, data.dir, identity, *snapshot, last, &log); !s.ok())
      std::fprintf(stderr, "pure-run: --data %s: warning: checkpoint not written (the log keeps every event): %s\n",
                   data.dir.c_str(), s.error.c_str());
  }
  return failure ? 3 : 0;
}

}  // namespace pure::tools
