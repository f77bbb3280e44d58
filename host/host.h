// host/host.h — durable module state: the event log (group commit, segments, poisoning),
// checkpoints written from store snapshots, and recovery (checkpoint, then log replay).
// Depends on runtime/store.h; the VM plugs in through EventRunner / ApplyEvent (host/vm_runner.cpp).
// This header does not include vm/vm.h; the owner thread (host/owner.h) and its durable
// Durability (open_durable) do. vm/ never includes host/.
//
// The promise: an event whose sequence number the log has acknowledged (wait_durable returned
// true, or the durable callback reported a sequence at or past it) survives a crash of the
// process or the machine, given a disk that honours fdatasync. Nothing unacknowledged is ever
// half-applied: recovery replays whole logged events or none. See docs/durability.md.
//
// What the log records is the call, not the changed rows: events are deterministic, so a replay
// of (event index, encoded arguments) in sequence order rebuilds the state. How arguments are
// encoded is the caller's business (the log stores bytes); ApplyEvent turns them back into a
// transaction on the store.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "runtime/store.h"

namespace pure::vm {
struct Program;
struct Value;
}  // namespace pure::vm

namespace pure::host {

class FileSystem;  // host/file_io.h: every file operation goes through it
struct VersionCode;  // host/versions.h: what one version of a module compiles to

// The file system of the machine (POSIX calls). Thread-safe.
FileSystem& posix_file_system();

// ok, or what failed and where ("DIR/FILE: offset N: ..."): the one Status type (base/status.h).
using Status = base::Status;

enum class Sync : uint8_t {
  Always,  // one fdatasync per burst before anything in it is acknowledged (the default)
  None,    // acknowledge after write(): a crash of the machine loses the unsynced tail
};

struct LogRecord {
  uint64_t sequence = 0;  // 1, 2, 3, ... with no gaps across the whole life of a module
  uint32_t event = 0;     // the event's index in the module (the caller's numbering)
  std::string_view args;  // the encoded arguments, opaque to the log
};

// Runs one logged event on the store as one transaction (begin ... commit). Returns "" when it
// committed, else why not: a logged event failing on replay means the log does not belong to
// this module or the module is not deterministic, and recovery stops with that reason.
using ApplyEvent = std::function<std::string(rt::Store& store, const LogRecord& record)>;

// How much history (log segments a checkpoint covers, and checkpoints older than the newest) a
// data directory keeps. Recovery needs none of it (it starts from the newest checkpoint); the
// audit trail reads it. After each checkpoint, history is removed oldest first while it is past
// either bound: a segment whose every record is older than keep_ms (its end time: the commit time
// of the first record after it), or while the history's bytes exceed keep_bytes. An older
// checkpoint goes once the records just after it are gone (it can no longer be replayed forward).
// A segment whose end time is unknown (written by a build from before commit times, followed only
// by such segments) is not aged: only keep_bytes removes it. docs/history.md.
struct Retention {
  static constexpr uint64_t kForever = UINT64_MAX;
  // The default (pure-run and pure-serve without --retain): a week of history, any size. A week
  // covers "what happened last Friday" on any server; bound the bytes too with --retain 7d,SIZE.
  static constexpr uint64_t kDefaultKeepMs = 7ull * 24 * 3600 * 1000;
  uint64_t keep_ms = kDefaultKeepMs;  // kForever: no age bound; 0: history goes at once (no history)
  uint64_t keep_bytes = kForever;     // kForever: no size bound
  bool keeps_all() const { return keep_ms == kForever && keep_bytes == kForever; }
  std::string describe() const;       // as --retain spells it: "7d", "2GiB", "7d,2GiB", "all", "none"
};
// Parses --retain: "all", "none", an age (a number and s, m, h or d), a size (a number and B, KiB,
// MiB, GiB or TiB), or an age and a size separated by a comma. "" or why the text is not one.
std::string parse_retention(std::string_view text, Retention* out);

struct LogOptions {
  Sync sync = Sync::Always;
  uint64_t segment_bytes = 64ull << 20;  // a segment rolls over before it would pass this
  Retention retain;                      // what a checkpoint leaves of the history it covers
  // The wall clock records are stamped with, in milliseconds since the Unix epoch (empty: the
  // system clock). Tests set it to step time.
  std::function<uint64_t()> clock;
};

// Called after each burst with the highest durable sequence number, or once with poisoned =
// true and the reason when a write or fsync failed (no call follows that one). Calls come one at
// a time, in order: on the log thread, or with sync=none on the appending thread inside append().
using DurableCallback = std::function<void(uint64_t durable_sequence, bool poisoned, const std::string& reason)>;

struct EventIn {
  uint32_t event = 0;
  std::string_view args;
  std::string_view key;     // the request's Idempotency-Key ("": none), at most limits::kIdempotencyKeyBytes
  std::string_view result;  // with a key: the event's encoded result (encode_values), for a retry's answer;
                            // failed: why the event failed
  bool failed = false;      // an audit-only record of an event that failed (no key): replay skips it
};

// Upper bounds (microseconds) of the buckets of LogStats::sync_buckets; the last bucket is the rest.
inline constexpr std::array<uint64_t, 12> kSyncBoundsUs = {50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000,
                                                           100000, 1000000};

struct LogStats {
  uint64_t records = 0;        // records written
  uint64_t bursts = 0;         // group commits (one write run and one fdatasync each)
  uint64_t bytes = 0;          // bytes appended to segments, headers included
  uint64_t segments_created = 0;
  uint64_t syncs = 0;          // fdatasync calls on segments (each burst with sync=always, each roll, close)
  uint64_t sync_us_total = 0;  // their total time
  std::array<uint64_t, kSyncBoundsUs.size() + 1> sync_buckets{};  // their times by kSyncBoundsUs
};

// The log of one module: the owner appends, a log thread writes and syncs in bursts (with
// sync=none the appender writes its own burst when the log thread is idle: no hand-off).
class EventLog {
 public:
  virtual ~EventLog() = default;
  // Owner thread. Queues the events as consecutive records; returns the sequence number of the
  // last, or 0 when the log is poisoned or closed (nothing was queued then). With sync=none it
  // may write them before it returns, calling the durable callback (or poisoning) on this thread.
  virtual uint64_t append(std::span<const EventIn> events) = 0;
  uint64_t append(uint32_t event, std::string_view args) {
    EventIn in{event, args};
    return append(std::span<const EventIn>(&in, 1));
  }
  // Blocks until sequence is durable (true) or the log is poisoned or closed before it (false).
  virtual bool wait_durable(uint64_t sequence) = 0;
  virtual uint64_t durable_sequence() const = 0;
  virtual uint64_t last_sequence() const = 0;  // the last one appended
  virtual bool poisoned() const = 0;
  virtual std::string poison_reason() const = 0;
  // Writes what is queued (with sync=none: then one fdatasync), stops the log thread. After it,
  // append returns 0. Returns the poison reason if the log is poisoned. Idempotent.
  virtual Status close() = 0;
  // Called after a checkpoint through that sequence is in place: deletes the history past the
  // log's retention (LogOptions::retain): the oldest of the segments all of whose records have
  // sequence <= through (never the segment being written), then the checkpoints older than
  // `through` that can no longer be replayed forward, fsyncing the directory after each kind.
  virtual Status retire_history(uint64_t through) = 0;
  // Records in the directory's manifest that checkpoint-<through>.ckpt is in place (written,
  // renamed, directory synced): recovery will need a checkpoint at least this new. Called by
  // write_checkpoint before anything older is deleted. Any thread, also after close().
  virtual Status record_checkpoint(uint64_t through) = 0;
  virtual LogStats stats() const = 0;
};

struct RecoveryProgress {
  uint64_t records_replayed = 0;
  uint64_t bytes_read = 0;   // log bytes scanned so far
  uint64_t bytes_total = 0;  // log bytes to scan
};

struct RecoveryReport;

struct OpenOptions {
  uint64_t module_identity = 0;          // a hash of the compiled module; the log and checkpoints carry it
  std::vector<rt::ListSchema> schemas;   // the module's stored lists
  ApplyEvent apply;                      // replays one logged event
  LogOptions log;
  DurableCallback on_durable;            // may be empty
  std::function<void(const RecoveryProgress&)> progress;  // may be empty
  uint64_t progress_every = 1u << 20;    // records between progress calls
  // Files the manifest records are missing (a deleted segment or checkpoint): start from what is
  // there instead of refusing, reporting the loss in RecoveryReport::data_loss. An operator's
  // decision (pure-run and pure-serve: --accept-data-loss), never a default.
  bool accept_data_loss = false;
  // A versioned directory (host/versions.h; open_versioned sets these): the version whose code and
  // schema hold at a sequence (a checkpoint's), and the code of a version. Replay then starts
  // with the checkpoint's version and switches at each version record. Unset: one module for the
  // whole log (schemas, apply), and a version record is an error.
  std::function<uint32_t(uint64_t sequence)> version_at;
  std::function<Status(uint32_t version, const VersionCode** out)> version_code;
  // Called once the state is recovered, before the log starts (open_module only): false leaves
  // the log unstarted (OpenedModule::log null) and the directory as recovery left it.
  std::function<bool(const RecoveryReport& report, rt::Store& store)> before_log;
};

struct RecoveryReport {
  uint64_t checkpoint_sequence = 0;  // 0: started from an empty store
  uint64_t records_replayed = 0;
  uint64_t last_sequence = 0;        // the state includes events 1..last_sequence
  uint32_t version = 0;              // versioned: the version the state is in after replay
  uint64_t torn_bytes_cut = 0;       // bytes of a torn last record (or an unfinished segment) removed
  double seconds = 0;
  // The directory held log or checkpoint files but no manifest (written before manifests, or its
  // manifest was deleted): nothing could be checked against one; open_module writes one.
  bool manifest_missing = false;
  std::string data_loss;             // with accept_data_loss: what was missing (else "")
  std::string summary() const;       // "recovered through sequence N: checkpoint M, K records replayed in S s"
};

struct OpenedModule {
  std::unique_ptr<rt::Store> store;  // the recovered state; the owner's from now on
  std::unique_ptr<EventLog> log;     // appends continue at report.last_sequence + 1
  RecoveryReport report;
};

// Opens (creating if missing) the data directory of one module: recovers the state and starts the
// log. On failure returns the reason (corruption names the file and byte offset; a log or
// checkpoint of a different module is refused) and leaves the files as they were, except that a
// torn last record is cut.
Status open_module(FileSystem& fs, const std::string& dir, OpenOptions options, OpenedModule* out);

// Recovery alone (open_module without starting a log). Tools and tests use it read-only apart
// from cutting a torn tail.
Status recover(FileSystem& fs, const std::string& dir, const OpenOptions& options, std::unique_ptr<rt::Store>* store,
               RecoveryReport* report);

struct CheckpointInfo {
  uint64_t bytes = 0;       // file size
  uint64_t rows = 0;
  uint64_t state_bytes = 0; // cells * 8 + text bytes, for comparison with the file size
  double seconds = 0;
  double retry_seconds = 0; // a failed one of open_durable's: the checkpoint thread waits this long before the next
};

// Writes snapshot (whose state includes exactly events 1..through) as the checkpoint of dir:
// temporary file, fdatasync, rename, directory fsync; then, when log is given, deletes the history
// past the log's retention (EventLog::retire_history); without a log (no history to keep), every
// older checkpoint. Any thread; the owner need not wait.
// On failure the temporary file is deleted. keep_free_bytes: the checkpoint stops (fails) rather
// than leave less free disk space than this to the event log (0: no check).
Status write_checkpoint(FileSystem& fs, const std::string& dir, uint64_t module_identity, const rt::Snapshot& snapshot,
                        uint64_t through, EventLog* log, CheckpointInfo* info = nullptr, uint64_t keep_free_bytes = 0);

// Reads one checkpoint file into a fresh store made from schemas (which must match the file's).
Status read_checkpoint(FileSystem& fs, const std::string& path, uint64_t module_identity,
                       const std::vector<rt::ListSchema>& schemas, std::unique_ptr<rt::Store>* store,
                       uint64_t* through);

// Makes bytes (a whole checkpoint file, as write_checkpoint writes it, made by another node of a
// cluster: cluster/) the state of dir, whose own state (closed: no log open on it) ends before it:
// the bytes are written to a temporary file, synced and read back whole (read_checkpoint: blocks'
// checksums, footer, identity, schemas) before it takes its final name, so a torn or damaged
// transfer is never installed; then the manifest names it, and the directory's older segments and
// checkpoints are deleted (the log goes on after the checkpoint). *through: its sequence.
Status install_checkpoint(FileSystem& fs, const std::string& dir, uint64_t module_identity,
                          const std::vector<rt::ListSchema>& schemas, std::string_view bytes, uint64_t* through);

// What a node ships of its own checkpoints (cluster/; host/install.cpp): the path of dir's
// checkpoint through `sequence`, the whole file's bytes, and the checksum a transfer is checked by
// (crc32c, as the log's records).
std::string checkpoint_path(const std::string& dir, uint64_t sequence);
Status read_checkpoint_bytes(FileSystem& fs, const std::string& path, std::string* bytes);
uint32_t transfer_checksum(std::string_view bytes);

// ---- The data directory itself (host/data_dir.cpp) ----

// A module served from DATA keeps its state in DATA/NAME. "" when name may be such a NAME: a plain
// identifier (ASCII letters, digits, '_', not starting with a digit, at most
// limits::kModuleNameBytes), so DATA/NAME is always one entry inside DATA (never ".", "..", a
// path or a hidden file); else the message, with the rule.
std::string check_module_name(std::string_view name);

// One process at a time per data directory: an exclusive flock on the directory itself, held as
// long as the DataDirLock lives (and released by the kernel however the process ends). The holder
// is named in DIR/lock ("pid N PROGRAM"), deleted when the lock is released.
class DataDirLock {
 public:
  ~DataDirLock();
  DataDirLock(const DataDirLock&) = delete;
  DataDirLock& operator=(const DataDirLock&) = delete;

 private:
  friend Status lock_data_dir(const std::string& dir, std::string_view program, std::unique_ptr<DataDirLock>* out);
  DataDirLock(int fd, std::string dir);
  int fd_;
  std::string dir_;
};

// Creates dir if missing, its entry made durable (the parent directory fsynced); the real file
// system. Its parent must exist.
Status make_data_dir(const std::string& dir);

// Creates dir if missing (its entry made durable), then locks it for this process, recording
// program and the pid. When another process holds it: "DIR: in use by PROGRAM (pid N): one process
// at a time per data directory". The real file system only (a flock has no in-memory double).
Status lock_data_dir(const std::string& dir, std::string_view program, std::unique_ptr<DataDirLock>* out);

// ---- Shipping records (cluster/: a module's log replicated on NATS JetStream) ----

// One event record in the log's own layout (host/log_format.h, kShippedVersion: version 3, so
// that nodes of builds before and after log version 4 still understand each other; a cluster
// ships committed events only, never the audit-only records version 4 added): what a leader
// ships to its followers, checksummed as in a segment.
struct ShippedRecord {
  uint64_t sequence = 0;
  uint32_t event = 0;
  uint64_t time_ms = 0;
  std::string_view key;     // Idempotency-Key ("": none)
  std::string_view result;  // with a key: the event's encoded result
  std::string_view args;    // encode_values of the arguments
};
// Appends record to out in the log's record layout.
void append_shipped_record(std::string& out, const ShippedRecord& record);
// Reads the record at *offset of bytes (its checksum checked) and moves *offset past it: "" or
// what is wrong with it ("offset N: record checksum mismatch").
std::string read_shipped_record(std::string_view bytes, size_t* offset, ShippedRecord* out);

// ---- Running events (the owner thread itself is host::Owner, host/owner.h) ----

// What one event call came to.
struct EventOutcome {
  bool ok = false;
  std::string reason;     // why it failed (ok == false): the event's own failure, or the host's
  std::string results;    // the runner's encoding of the event's results
  uint64_t sequence = 0;  // its log sequence number when it committed
};

// Runs one event on a store; the VM glue implements it over vm::call_event. Recovery replays
// logged events through it (open_durable, pure-run --data).
class EventRunner {
 public:
  virtual ~EventRunner() = default;
  // Runs one event as one transaction on store. A failed event must leave the store unchanged.
  virtual EventOutcome run(rt::Store& store, uint32_t event, std::string_view args) = 0;
};

// ---- The VM glue (host/vm_runner.cpp) ----

// The identity a compiled module's log and checkpoints carry: a 64-bit hash of its bytecode
// (as --dump-bytecode prints it), its constant texts and its stored lists. Any change to the compiled module changes it.
uint64_t module_identity(const vm::Program& program);

// The log's encoding of event arguments. Per value: a kind byte (0 Int, 1 Num, 2 Bool, 3 Text,
// 4 Item, 5 List), then Int and Bool as i64, Num as its IEEE bits, Text as u32 byte count and
// bytes, Item and List as u32 count and the values. Little-endian.
std::string encode_values(std::span<const vm::Value> values);
// The same bytes appended to out (a buffer reused from one batch of events to the next allocates
// nothing once it has grown).
void append_encoded_values(std::string& out, std::span<const vm::Value> values);
Status decode_values(std::string_view bytes, std::vector<vm::Value>* out);

// Runs events of program (event index = function index, arguments encode_values'd) through
// vm::call_event, each with its own budget of max_steps. program outlives the runner.
std::unique_ptr<EventRunner> make_vm_runner(const vm::Program& program, uint64_t max_steps = 10'000'000'000ull);

}  // namespace pure::host
