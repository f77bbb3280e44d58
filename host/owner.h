// host/owner.h — the owner thread of one hosted module: events from any thread are queued and run
// by one thread, in arrival order, each its own transaction (vm::call_event), in batches of
// whatever has arrived. A batch's committed events go to a Durability; only when it reports
// them durable does the batch's snapshot become visible to queries and do the batch's callers
// get their outcomes, in order (visible = durable). Queries run on the calling thread against
// the latest visible snapshot. Several Owners (modules) may live in one process.
//
// open_durable() gives the durable implementation of Durability: the event log of a data
// directory (host.h: group commit, segments, poisoning), recovery before the owner starts, and a
// checkpoint thread that writes the visible snapshot when the log has grown or time has passed
// (the owner never waits for it). NoDurability keeps nothing and acknowledges at once (state lives
// as long as the process).
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "host/host.h"
#include "host/idempotency.h"
#include "host/published.h"
#include "runtime/store.h"
#include "vm/vm.h"

namespace pure::host {

struct VersionedOptions;  // host/versions.h
struct VersionedReport;

// One committed event as the log records it: the event's function index and its arguments.
// `args` is valid only during Durability::append (encode it there).
struct CommittedEvent {
  uint32_t fn = 0;
  std::span<const vm::Value> args;
  std::string_view key;     // its Idempotency-Key ("": none), logged with it
  std::string_view result;  // with a key: its encoded result (encode_values), logged with it; failed: its reason
  bool failed = false;      // an event that failed, logged as an audit-only record (Durability::audits_failed)
};

// Called when events up to `durable_sequence` are durable, or once with poisoned = true and the
// reason when the log failed (no call follows that one). Any thread, possibly inside append().
using DurableListener = std::function<void(uint64_t durable_sequence, bool poisoned, const std::string& reason)>;

// What a Durability can report for metrics; zeros where it keeps nothing.
struct DurabilityStats {
  bool durable = false;            // false: NoDurability
  LogStats log;                    // records, bursts, bytes, fsyncs and their latency
  uint64_t checkpoints = 0;        // written completely since the start
  uint64_t checkpoint_failures = 0;
  uint64_t checkpoint_failures_in_row = 0;  // since the last checkpoint written; the thread backs off after each
  double checkpoint_retry_seconds = 0;      // after a failure: seconds until the thread may try again
  uint64_t checkpoint_sequence = 0;     // the newest checkpoint holds events 1..this (0: none)
  double checkpoint_age_seconds = -1;   // since the newest checkpoint was written or found; -1: none
  uint64_t checkpoint_bytes = 0;        // size of the newest checkpoint written by this process
  uint64_t snapshots_held = 0;          // snapshots it holds that the owner does not: one while a checkpoint
                                        // is being written of a snapshot no longer the visible one
};

// Where an owner sends its batches. append() is called on the owner thread only.
class Durability {
 public:
  virtual ~Durability() = default;
  // Set once, before the first append.
  virtual void set_listener(DurableListener listener) = 0;
  // The sequence number of the last event already in the state when the owner starts (recovery).
  virtual uint64_t last_sequence() const = 0;
  // The idempotency keys recovered with the state (the window of the retained log): moved into
  // *out once, before the first append. Keeps none: leaves *out as it is.
  virtual void take_keys(IdempotencyTable* out) { (void)out; }
  // Queues the events as consecutive records; returns the sequence number of the last, or 0 when
  // the log is poisoned or closed (nothing was queued then). events is never empty.
  virtual uint64_t append(std::span<const CommittedEvent> events) = 0;
  // Whether the owner passes failed events to append too (CommittedEvent::failed), each logged as
  // an audit-only record that takes a sequence (docs/history.md, --audit-failed). Keeps none: false.
  virtual bool audits_failed() const { return false; }
  // Queues the record that starts version `number` (host/versions.h kVersionEvent) after what was
  // appended; returns its sequence, or 0 when the log is poisoned or closed, or keeps no versions.
  virtual uint64_t append_version(uint32_t number) {
    (void)number;
    return 0;
  }
  // Makes what was appended durable (reporting it through the listener) and stops. Returns "" or
  // why it failed. Idempotent.
  virtual std::string close() = 0;
  // The owner made snapshot (holding exactly events 1..sequence, all durable) visible. Called in
  // sequence order, with the owner's lock held: keep it short and never block.
  virtual void published(const std::shared_ptr<const rt::Snapshot>& snapshot, uint64_t sequence) {
    (void)snapshot;
    (void)sequence;
  }
  virtual DurabilityStats stats() const { return {}; }
};

// Keeps nothing: every append is acknowledged at once, inside append(). For in-memory serving.
std::unique_ptr<Durability> make_no_durability();

struct DurableOptions {
  LogOptions log;                              // sync=always|none, segment size
  uint64_t checkpoint_log_bytes = 64ull << 20; // log bytes since the last checkpoint that trigger one; 0: never
  double checkpoint_seconds = 300;             // time since the last checkpoint that triggers one (when events
                                               // came since); 0: never
  uint64_t replay_max_steps = 10'000'000'000ull;  // step budget of each event replayed by recovery
  std::function<void(const RecoveryProgress&)> progress;  // recovery progress, on the opening thread
  uint64_t progress_every = 1u << 20;                     // records between progress calls
  bool accept_data_loss = false;  // OpenOptions::accept_data_loss: start when the manifest's files are missing
  // Failed events (fail, a runtime error, a spent budget) are logged as audit-only records with
  // their arguments and reason (--audit-failed, docs/history.md): replay skips them.
  bool audit_failed = true;
  // After a failed checkpoint the thread waits before it tries again, however much the log grows
  // meanwhile: retry_seconds after the first failure in a row, twice as long after each next one,
  // at most retry_max_seconds (checkpoint_retry_delay). A checkpoint also stops rather than leave
  // less free disk space than one log segment (log.segment_bytes): the log is never starved by it.
  double checkpoint_retry_seconds = 1;
  double checkpoint_retry_max_seconds = 300;
  // After each checkpoint attempt, on the checkpoint thread: "" or why it failed (a failed
  // checkpoint loses nothing: the log still holds every event), what it wrote, its sequence.
  std::function<void(const std::string& error, const CheckpointInfo& info, uint64_t sequence)> on_checkpoint;
  // A versioned directory (host/versions.h, docs/upgrades.md): when set, the directory is opened
  // by open_versioned (each logged event replayed by its own version's code; a changed source
  // planned, and applied when versions->upgrade), and its report is written to *versions_report.
  // The code's apply may be left empty: the program's own replay is used.
  const VersionedOptions* versions = nullptr;
  VersionedReport* versions_report = nullptr;
};

// Seconds the checkpoint thread waits after the failures-th failed checkpoint in a row (failures >= 1).
double checkpoint_retry_delay(const DurableOptions& options, uint64_t failures);

// The durable Durability over one data directory.
class DurableLog : public Durability {
 public:
  virtual const RecoveryReport& recovery() const = 0;
  // Writes a checkpoint of the last published snapshot now, on the calling thread (the owner keeps
  // going). "" or why it failed.
  virtual std::string checkpoint_now(CheckpointInfo* info = nullptr) = 0;
};

// Opens (creating if missing) the data directory of program: recovers the state (the newest
// checkpoint, then the log replayed through vm::call_event), starts the log and the checkpoint
// thread. Give *store and *out to an Owner. Fails with recovery's message (the file and offset of
// any damage; another module's log refused).
Status open_durable(FileSystem& fs, const std::string& dir, const vm::Program& program, DurableOptions options,
                    std::unique_ptr<rt::Store>* store, std::unique_ptr<DurableLog>* out);

// What one event came to.
struct EventReply {
  enum class Kind : uint8_t {
    Committed,    // applied and durable; sequence set
    Failed,       // `fail` or a runtime error: rolled back; reason set; sequence: its audit-only
                  // record's when the Durability audits failed events (durable then), else 0
    Unavailable,  // not run or not acknowledged: shutting down, queue full, or log poisoned; reason set
    KeyReused,    // not run: its idempotency key committed another event, or other arguments, as
                  // `sequence` (durable); reason set
  };
  Kind kind = Kind::Failed;
  uint64_t sequence = 0;
  std::string reason;
  vm::Value value;  // Committed: the event's declared result (Kind::Int 0 when it declares none)
  // Committed, but its result was not read out (vm::CallResult's fields of the same names).
  uint64_t result_bytes_at_least = 0;
  std::string result_error;
  // Committed: not run now: its idempotency key had committed this event with these arguments as
  // `sequence`, whose result this is (the original answer).
  bool replayed = false;
  // Committed or Failed: the module version whose code ran it (docs/upgrades.md; 1 before any upgrade).
  uint32_t version = 0;
};
using EventDone = std::function<void(EventReply)>;

// A memory budget several owners share (pure-serve --max-memory-total): each adds the bytes its
// module's state holds (rt::MemoryUse: state and structure) and takes them back when it closes.
struct MemoryPool {
  explicit MemoryPool(uint64_t l) : limit(l) {}
  const uint64_t limit;
  std::atomic<uint64_t> held{0};
};

struct OwnerOptions {
  uint64_t max_steps = 10'000'000;  // step budget of each event and query
  // The module's memory budget: its stored state (rt::MemoryUse, state and structure bytes) plus
  // what one event or query allocates on top of it. An event that would pass it fails (a runtime
  // error naming the budget and --max-memory) and is rolled back. 0: vm::RunOptions' default.
  uint64_t max_memory = 0;
  // Shared by the owners of one process (may be null): an event also fails when all the modules'
  // states together plus what it allocates would pass pool->limit (the message names
  // --max-memory-total). The tighter of the two budgets applies.
  std::shared_ptr<MemoryPool> pool;
  // vm::RunOptions::max_result_bytes of each event and query (0: none).
  uint64_t max_result_bytes = 0;
  size_t max_queue = 100'000;       // events waiting for the owner; more are Unavailable
  // A JIT's tier-up hook (vm/engine.h) for the events and queries this owner runs; null: interpret.
  // It must outlive the owner's runs (close() first) and be safe to call from several threads.
  vm::Tier* tier = nullptr;
  // Called once, on the thread that learns it, when the log fails and the module turns unhealthy;
  // it returns before any event is answered Unavailable because of that failure, and before
  // healthy() turns false.
  std::function<void(const std::string& reason)> on_unhealthy;
  // Where the callbacks of a batch's replies run. Null: on the thread that learns the batch is
  // durable (the owner's, or the log's), one after another. Set: each delivery's callbacks, in
  // order, are handed to it as one job (any thread may call it; it must run every job exactly
  // once, or destroy it unrun only when the callers are gone). pure-serve posts the job to its
  // I/O threads: one hand-off a batch instead of one a reply, and the replies' encoding leaves
  // the owner.
  std::function<void(std::function<void()> job)> reply_runner;
  // The module version the program is (host/versions.h) and the sequence of its version record
  // (0: from the start): what the replies' `version` says until a hot upgrade (Owner::upgrade).
  uint32_t version = 1;
  uint64_t version_begins = 0;
};

// A hot upgrade (docs/upgrades.md): the owner switches to another program between two batches.
struct HotUpgrade {
  const vm::Program* program = nullptr;  // the new version's code; outlives the owner
  uint32_t version = 0;                  // its number (the current one plus one)
  // On the owner thread, between two batches (every earlier batch appended to the log, not
  // necessarily durable yet), with the live store and the sequence the version record would get:
  // plans, checks and writes the version file. false: stop here (a plan only, or refused), nothing
  // was changed.
  std::function<bool(const rt::Store& store, uint64_t sequence)> prepare;
  // Once the version record is durable, before any event runs on the new version: changes the
  // store to the new schema (may replace it). "" or why not; then the module turns unhealthy (the
  // log says the new version begins there, and the store could not follow).
  std::function<std::string(std::unique_ptr<rt::Store>* store)> apply;
};
struct HotUpgradeDone {
  bool applied = false;       // the owner runs the new version now
  uint64_t sequence = 0;      // applied: the version record's sequence
  double pause_seconds = 0;   // applied: from prepare's start to the new version serving (no event ran meanwhile)
  std::string error;          // not applied after prepare said go: why (the log refused, apply failed)
};

struct OwnerStats {
  uint64_t committed = 0;       // events acknowledged as committed
  uint64_t failed = 0;          // events that failed and were rolled back
  uint64_t replayed = 0;        // retries answered from their idempotency key (not run again)
  uint64_t key_reused = 0;      // refused: their idempotency key committed another event or arguments
  uint64_t unavailable = 0;     // events refused or not acknowledged
  uint64_t batches = 0;         // batches the owner ran
  uint64_t queued = 0;          // events waiting now
  uint64_t visible_sequence = 0;
  uint64_t memory_bytes = 0;    // held against the memory budget: state + structure bytes, after the last event
  uint64_t memory_budget = 0;   // OwnerOptions::max_memory (or the default)
  uint64_t state_bytes = 0;     // rt::MemoryUse of the store after the last batch
  uint64_t structure_bytes = 0;
  uint64_t snapshots_held = 0;  // held by the owner: the visible one and those of batches waiting to be durable
                                // (distinct snapshots; DurabilityStats::snapshots_held adds the checkpoint's)
  DurabilityStats durability;
};

class Owner {
 public:
  // program outlives the Owner; store holds the state (recovered, or fresh) that durability's
  // last_sequence() describes. Starts the owner thread.
  Owner(std::string name, const vm::Program& program, std::unique_ptr<rt::Store> store,
        std::unique_ptr<Durability> durability, OwnerOptions options = {});
  ~Owner();  // close()
  Owner(const Owner&) = delete;
  Owner& operator=(const Owner&) = delete;

  const std::string& name() const { return name_; }
  // The program the owner was made with (a hot upgrade does not change it: see program_at).
  const vm::Program& program() const { return first_program_; }

  // Any thread. Queues event `fn` (an event of program(); args already checked by the caller or
  // checked on the owner). done runs exactly once: on a durability or owner thread, or on this
  // thread at once when the event is refused. It must not block.
  // key: the request's Idempotency-Key ("": none; else check_idempotency_key passed): an event
  // whose key committed the same event with the same arguments within the window is not run
  // again but answered as that one was (replayed, once it is durable); with another event or
  // other arguments it is KeyReused. A failed event's key is not remembered (a retry runs it).
  // decoded_for: the program in which the caller found fn and checked args (null: program()). When
  // a hot upgrade switched programs since, the event runs as the new version's event of the same
  // name if its parameters and result are the same, and fails (rolled back, nothing logged) if not.
  void submit(uint32_t fn, std::vector<vm::Value> args, EventDone done, std::string key = {},
              const vm::Program* decoded_for = nullptr);

  // Any thread. Queues a hot upgrade: the owner runs it after the batch it is running, before the
  // next (see HotUpgrade); done runs once, on the owner thread (or at once on this one when the
  // owner is stopping or unhealthy). Events queued meanwhile wait and then run on whichever version
  // is current (submit's decoded_for).
  void upgrade(HotUpgrade upgrade, std::function<void(const HotUpgradeDone&)> done);

  // Any thread: the program of the version in force at sequence (a visible snapshot's), and its number.
  std::pair<const vm::Program*, uint32_t> program_at(uint64_t sequence) const;

  // Any thread: the latest visible (durable) state.
  std::shared_ptr<const rt::Snapshot> snapshot() const;
  // Any thread: the latest visible state and the sequence of the last event it holds, read together.
  std::pair<std::shared_ptr<const rt::Snapshot>, uint64_t> visible() const;
  // Any thread: runs query fn against snapshot(), with the owner's step budget.
  // cancel: vm::RunOptions::cancel (null: none).
  // decoded_for: as submit's (the query runs with the code of the snapshot's version; a query of
  // the same name and types stands in for fn, else it fails with the reason).
  vm::CallResult query(uint32_t fn, std::span<const vm::Value> args, const std::atomic<const char*>* cancel = nullptr,
                       const vm::Program* decoded_for = nullptr) const;
  // Any thread: runs query fn of `program` (the version whose schema the snapshot is in) against
  // another snapshot of this module's stored lists (a past state, host/as_of.h), with the same
  // budget; memory_held: the bytes that snapshot holds, counted against the budget with the
  // module's own state.
  vm::CallResult query_at(const vm::Program& program, std::shared_ptr<const rt::Snapshot> snapshot, uint64_t memory_held,
                          uint32_t fn, std::span<const vm::Value> args,
                          const std::atomic<const char*>* cancel = nullptr) const;

  bool healthy() const { return !poisoned_.load(std::memory_order_acquire); }
  std::string unhealthy_reason() const;
  OwnerStats stats() const;

  // Stops taking events, runs what is queued, waits until it is durable (or the log fails), and
  // stops the thread. Every pending callback has run (or, with a reply_runner, has been handed to
  // it) when it returns. Idempotent.
  std::string close();

 private:
  struct Pending {
    uint32_t fn;
    std::vector<vm::Value> args;
    EventDone done;
    std::string key;
    const vm::Program* decoded_for = nullptr;
  };
  struct Upgrading {
    HotUpgrade upgrade;
    std::function<void(const HotUpgradeDone&)> done;
  };
  struct Version {
    uint32_t number;
    uint64_t begins;
    const vm::Program* program;
  };
  // A batch run by the owner, waiting for its events to be durable.
  struct Waiting {
    uint64_t through = 0;  // visible once durable_sequence >= through
    std::shared_ptr<const rt::Snapshot> snapshot;  // null when the batch changed nothing
    std::vector<std::pair<EventDone, EventReply>> replies;
  };

  void run();
  void on_durable(uint64_t sequence, bool poisoned, const std::string& reason);
  // The first caller fixes the reason and runs options_.on_unhealthy; every caller returns that
  // reason, and only once the callback has returned (so it happens before the poison is published).
  std::string report_unhealthy(const std::string& reason);
  // Moves batches that are durable out of waiting_ (with waiting_mu_ held), publishing the last
  // snapshot among them.
  void collect_ready(std::vector<Waiting>& out);
  void deliver(std::vector<Waiting>& ready);  // runs the callbacks in order, counting outcomes
  void run_upgrade(Upgrading& u);             // the owner thread, between batches
  // The index in `to` (version to_version) of the event or query of the same name and types as
  // fn of `from`, or -1 and why it cannot run there.
  int64_t remap(const vm::Program& from, const vm::Program& to, uint32_t to_version, uint32_t fn,
                std::string* why) const;
  // The options of one event: the budget with the least room left (the module's or the pool's),
  // with the bytes already held against it.
  vm::RunOptions event_options() const;
  void note_memory();  // after an event: the store's bytes to memory_held_ and the pool

  const std::string name_;
  const vm::Program& first_program_;
  const vm::Program* program_;   // owner thread only: the version running now
  uint32_t version_ = 1;         // owner thread only
  mutable std::mutex versions_mu_;
  std::vector<Version> versions_;  // oldest first: what program_at reads
  std::unique_ptr<rt::Store> store_;  // owner thread only
  std::unique_ptr<Durability> durability_;
  const OwnerOptions options_;
  vm::RunOptions run_options_;
  uint64_t next_sequence_ = 1;  // owner thread only
  IdempotencyTable keys_;       // owner thread only (after the constructor)

  mutable std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::vector<Pending> queue_;
  std::vector<Upgrading> upgrades_;  // run before the next batch
  bool stopping_ = false;

  // Taken before waiting_mu_, never while holding it.
  std::mutex report_mu_;
  bool reported_ = false;
  std::string reported_reason_;

  mutable std::mutex waiting_mu_;
  std::deque<Waiting> waiting_;
  uint64_t durable_ = 0;
  std::condition_variable durable_cv_;  // durable_ grew or the log failed (an upgrade waits for its record)
  std::string poison_reason_;
  std::atomic<bool> poisoned_{false};

  // The visible snapshot and the sequence it holds: readers take it without a lock
  // (host/published.h); published from collect_ready, with waiting_mu_ held.
  Published<rt::Snapshot> visible_;

  std::atomic<uint64_t> replayed_{0}, key_reused_{0};
  std::atomic<uint64_t> committed_{0}, failed_{0}, unavailable_{0}, batches_{0}, visible_sequence_{0};
  std::atomic<uint64_t> state_bytes_{0}, structure_bytes_{0};
  std::atomic<uint64_t> memory_held_{0};  // state + structure bytes now (owner thread writes)

  std::mutex close_mu_;
  bool closed_ = false;
  std::string close_result_;
  std::thread thread_;
};

}  // namespace pure::host
