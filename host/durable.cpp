// host/durable.cpp — the durable Durability (owner.h): recovery of a data directory through the
// VM, the event log the owner's committed batches go to (arguments encoded by encode_values), and
// a checkpoint thread that writes the last published snapshot when the log has grown by
// checkpoint_log_bytes or checkpoint_seconds have passed with new events. The owner never waits
// for a checkpoint: published() swaps one pointer under a leaf mutex and may wake the thread.
// Depends on owner.h, host.h, file_io.h.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "base/assert.h"
#include "host/bytes.h"
#include "host/file_io.h"
#include "host/owner.h"
#include "host/versions.h"

namespace pure::host {

namespace {

using Clock = std::chrono::steady_clock;

class DurableLogImpl final : public DurableLog {
 public:
  DurableLogImpl(FileSystem& fs, std::string dir, uint64_t identity, DurableOptions options)
      : fs_(fs), dir_(std::move(dir)), identity_(identity), options_(std::move(options)) {}

  ~DurableLogImpl() override { close(); }

  void set_identity(uint64_t identity) { identity_ = identity; }
  IdempotencyTable& keys() { return keys_; }  // open_durable fills it before start()

  void start(std::unique_ptr<EventLog> log, const RecoveryReport& report) {
    log_ = std::move(log);
    report_ = report;
    checkpoint_sequence_ = report.checkpoint_sequence;
    if (report.checkpoint_sequence) checkpoint_time_ = Clock::now();
    checkpoint_log_bytes_ = log_->stats().bytes;
    checkpointer_ = std::thread([this] { run_checkpointer(); });
  }

  // Called by the log thread (through the EventLog's callback).
  void durable(uint64_t sequence, bool poisoned, const std::string& reason) {
    DurableListener listener;
    {
      std::lock_guard<std::mutex> lock(listener_mu_);
      listener = listener_;
    }
    if (listener) listener(sequence, poisoned, reason);
  }

  void set_listener(DurableListener listener) override {
    std::lock_guard<std::mutex> lock(listener_mu_);
    listener_ = std::move(listener);
  }

  uint64_t last_sequence() const override { return report_.last_sequence; }
  bool audits_failed() const override { return options_.audit_failed; }
  void take_keys(IdempotencyTable* out) override { *out = std::move(keys_); }

  uint64_t append(std::span<const CommittedEvent> events) override {
    // Every event's arguments encoded back to back into one buffer that keeps its capacity from
    // batch to batch (no allocation per event); the views are taken once it has stopped growing.
    encoded_.clear();
    ends_.resize(events.size());
    for (size_t i = 0; i < events.size(); ++i) {
      append_encoded_values(encoded_, events[i].args);
      ends_[i] = encoded_.size();
    }
    in_.resize(events.size());
    for (size_t i = 0, begin = 0; i < events.size(); begin = ends_[i++]) {
      std::string_view args(encoded_.data() + begin, ends_[i] - begin);
      in_[i] = EventIn{events[i].fn, args, events[i].key, events[i].result, events[i].failed};
    }
    return log_->append(in_);
  }

  uint64_t append_version(uint32_t number) override {
    char args[4];
    store_u32(args, number);
    return log_->append(kVersionEvent, std::string_view(args, 4));
  }

  std::string close() override {
    std::lock_guard<std::mutex> guard(close_mu_);
    if (closed_) return close_error_;
    closed_ = true;
    {
      std::lock_guard<std::mutex> lock(checkpoint_mu_);
      stop_ = true;
    }
    checkpoint_cv_.notify_one();
    if (checkpointer_.joinable()) checkpointer_.join();
    if (log_) close_error_ = log_->close().error;
    return close_error_;
  }

  void published(const std::shared_ptr<const rt::Snapshot>& snapshot, uint64_t sequence) override {
    bool wake = false;
    {
      std::lock_guard<std::mutex> lock(checkpoint_mu_);
      latest_ = snapshot;
      latest_sequence_ = sequence;
      if (options_.checkpoint_log_bytes && log_ && !requested_ &&
          log_->stats().bytes - checkpoint_log_bytes_ >= options_.checkpoint_log_bytes)
        wake = requested_ = true;
    }
    if (wake) checkpoint_cv_.notify_one();
  }

  DurabilityStats stats() const override {
    DurabilityStats s;
    s.durable = true;
    if (log_) s.log = log_->stats();
    std::lock_guard<std::mutex> lock(checkpoint_mu_);
    s.checkpoints = checkpoints_;
    s.checkpoint_failures = checkpoint_failures_;
    s.checkpoint_failures_in_row = failures_in_row_;
    if (failures_in_row_ && retry_at_ > Clock::now())
      s.checkpoint_retry_seconds = std::chrono::duration<double>(retry_at_ - Clock::now()).count();
    s.checkpoint_sequence = checkpoint_sequence_;
    if (checkpoint_time_) s.checkpoint_age_seconds = std::chrono::duration<double>(Clock::now() - *checkpoint_time_).count();
    s.checkpoint_bytes = checkpoint_bytes_;
    // latest_ is the owner's visible snapshot (counted there); a checkpoint being written holds
    // one more only when the owner has published a newer one since it began.
    s.snapshots_held = writing_ != nullptr && writing_ != latest_.get();
    return s;
  }

  const RecoveryReport& recovery() const override { return report_; }

  std::string checkpoint_now(CheckpointInfo* info) override {
    std::lock_guard<std::mutex> guard(write_mu_);
    std::shared_ptr<const rt::Snapshot> snapshot;
    uint64_t sequence = 0;
    uint64_t log_bytes = 0;
    {
      std::lock_guard<std::mutex> lock(checkpoint_mu_);
      if (!latest_) return "no snapshot published yet";
      snapshot = latest_;
      sequence = latest_sequence_;
      writing_ = snapshot.get();
    }
    if (log_) log_bytes = log_->stats().bytes;
    CheckpointInfo written;
    Status s = write_checkpoint(fs_, dir_, identity_, *snapshot, sequence, log_.get(), &written,
                                options_.log.segment_bytes);
    {
      std::lock_guard<std::mutex> lock(checkpoint_mu_);
      writing_ = nullptr;
      if (s.ok()) {
        ++checkpoints_;
        checkpoint_sequence_ = sequence;
        checkpoint_time_ = Clock::now();
        checkpoint_bytes_ = written.bytes;
        checkpoint_log_bytes_ = log_bytes;
        failures_in_row_ = 0;
      } else {
        ++checkpoint_failures_;
        ++failures_in_row_;
        written.retry_seconds = checkpoint_retry_delay(options_, failures_in_row_);
        retry_at_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(written.retry_seconds));
      }
    }
    if (info) *info = written;
    if (options_.on_checkpoint) options_.on_checkpoint(s.error, written, sequence);
    return s.error;
  }

 private:
  // Waits for a request (log size) or for the time trigger, then writes the checkpoint.
  void run_checkpointer() {
    using std::chrono::duration_cast;
    const auto period = options_.checkpoint_seconds > 0
                            ? duration_cast<Clock::duration>(std::chrono::duration<double>(options_.checkpoint_seconds))
                            : Clock::duration::max();
    Clock::time_point since = Clock::now();  // the time trigger counts from the last checkpoint (or the start)
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(checkpoint_mu_);
        // After a failure nothing triggers one before retry_at_: not the log's growth (which asks
        // again after every batch), not the time.
        auto backing_off = [&] { return failures_in_row_ && Clock::now() < retry_at_; };
        auto due = [&] {
          if (stop_) return true;
          if (backing_off()) return false;
          if (requested_) return true;
          return period != Clock::duration::max() && Clock::now() - since >= period &&
                 latest_sequence_ > checkpoint_sequence_;
        };
        while (!due()) {
          if (backing_off()) {
            checkpoint_cv_.wait_until(lock, retry_at_);
          } else if (period == Clock::duration::max()) {
            checkpoint_cv_.wait(lock);
          } else {
            // Wake at the deadline, or a second from now when nothing new came since it passed.
            Clock::time_point deadline = since + period;
            if (deadline <= Clock::now()) deadline = Clock::now() + std::chrono::seconds(1);
            checkpoint_cv_.wait_until(lock, deadline);
          }
        }
        if (stop_) return;
      }
      checkpoint_now(nullptr);  // a failed checkpoint loses nothing: the log holds every event
      since = Clock::now();
      std::lock_guard<std::mutex> lock(checkpoint_mu_);
      requested_ = false;
    }
  }

  FileSystem& fs_;
  const std::string dir_;
  uint64_t identity_;  // set before start(): the checkpoint thread reads it after
  const DurableOptions options_;
  std::unique_ptr<EventLog> log_;
  RecoveryReport report_;
  IdempotencyTable keys_;  // rebuilt by open_durable, handed to the owner (take_keys)

  std::mutex listener_mu_;
  DurableListener listener_;

  // The owner thread's, for append().
  std::string encoded_;        // append(): the batch's encoded arguments, back to back
  std::vector<size_t> ends_;   // where each event's arguments end in encoded_
  std::vector<EventIn> in_;

  mutable std::mutex checkpoint_mu_;  // a leaf: nothing else is locked while it is held, but the log's
  std::condition_variable checkpoint_cv_;
  std::shared_ptr<const rt::Snapshot> latest_;  // the last published snapshot
  uint64_t latest_sequence_ = 0;
  bool requested_ = false;
  bool stop_ = false;
  const rt::Snapshot* writing_ = nullptr;  // the snapshot a checkpoint being written holds
  uint64_t checkpoints_ = 0, checkpoint_failures_ = 0, checkpoint_sequence_ = 0, checkpoint_bytes_ = 0;
  uint64_t checkpoint_log_bytes_ = 0;  // log bytes written when the last checkpoint began
  uint64_t failures_in_row_ = 0;       // checkpoints failed since the last one written
  Clock::time_point retry_at_{};       // after a failure: the thread starts none before this
  std::optional<Clock::time_point> checkpoint_time_;

  std::mutex write_mu_;  // one checkpoint at a time
  std::thread checkpointer_;

  std::mutex close_mu_;
  bool closed_ = false;
  std::string close_error_;
};

}  // namespace

double checkpoint_retry_delay(const DurableOptions& options, uint64_t failures) {
  PURE_ASSERT(failures >= 1);
  double delay = options.checkpoint_retry_seconds;
  for (uint64_t i = 1; i < failures && delay < options.checkpoint_retry_max_seconds; ++i) delay *= 2;
  return std::min(delay, options.checkpoint_retry_max_seconds);
}

Status open_durable(FileSystem& fs, const std::string& dir, const vm::Program& program, DurableOptions options,
                    std::unique_ptr<rt::Store>* store, std::unique_ptr<DurableLog>* out) {
  uint64_t identity = module_identity(program);
  std::shared_ptr<EventRunner> runner = make_vm_runner(program, options.replay_max_steps);
  auto impl = std::make_unique<DurableLogImpl>(fs, dir, identity, options);
  OpenOptions o;
  o.module_identity = identity;
  o.schemas = program.stored;
  o.apply = [runner](rt::Store& s, const LogRecord& r) -> std::string {
    EventOutcome outcome = runner->run(s, r.event, r.args);
    return outcome.ok ? std::string() : outcome.reason.empty() ? "the event failed" : outcome.reason;
  };
  o.log = options.log;
  o.progress = options.progress;
  o.progress_every = options.progress_every;
  o.accept_data_loss = options.accept_data_loss;
  DurableLogImpl* target = impl.get();
  o.on_durable = [target](uint64_t sequence, bool poisoned, const std::string& reason) {
    target->durable(sequence, poisoned, reason);
  };
  OpenedModule opened;
  if (options.versions) {
    VersionedOptions versioned = *options.versions;
    if (!versioned.code.apply) versioned.code.apply = o.apply;
    VersionedReport report;
    if (Status s = open_versioned(fs, dir, std::move(o), std::move(versioned), &opened, &report); !s.ok()) {
      // What a migrate block printed before it failed is still the caller's to show.
      if (options.versions_report) options.versions_report->migration_output = std::move(report.migration_output);
      return s;
    }
    if (report.needs_upgrade) {
      std::string plan = report.plan.render();
      if (!plan.empty() && plan.back() == '\n') plan.pop_back();
      return Status::failure(dir + ": the source differs from version " + std::to_string(report.version) +
                             " of this directory, and upgrades are applied only when asked for (--upgrade): " + plan);
    }
    impl->set_identity(report.history.front().identity);
    if (options.versions_report) *options.versions_report = std::move(report);
  } else if (Status s = open_module(fs, dir, std::move(o), &opened); !s.ok()) {
    return s;
  }
  // The idempotency keys of the window, from the retained log (the records carry them). The
  // identity is not checked again (recovery did; a versioned log's segments carry several).
  if (Status s = rebuild_idempotency(fs, dir, 0, opened.report.last_sequence, options.log.clock ? options.log.clock() : wall_clock_ms(), &impl->keys()); !s.ok())
    return Status::failure(dir + ": " + s.error);
  impl->start(std::move(opened.log), opened.report);
  *store = std::move(opened.store);
  *out = std::move(impl);
  return {};
}

}  // namespace pure::host
