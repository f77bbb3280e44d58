// base/limits.h — every implementation limit in one place, each with why it is what it is. A
// limit reached is a clear error (compile error or runtime error), never a crash. Depends on
// nothing; every layer may include it. docs/errors.md quotes these numbers.
#pragma once
#include <cstddef>
#include <cstdint>

namespace pure::limits {

// Frontend. Parsing and checking recurse over the syntax tree; these bound that recursion so
// no input can overflow the native stack.
inline constexpr int kNestingDepth = 200;            // nesting levels: blocks, brackets, items, ... (parser.cpp)
inline constexpr uint32_t kExpressionHeight = 1000;  // tallest expression tree (long operator chains)
inline constexpr size_t kErrorsShown = 20;           // diagnostics printed per run
inline constexpr size_t kErrorsBeforeAbort = 200;    // the checker stops after this many

// pure-lsp (lsp/server.cpp). One JSON-RPC message from an editor holds at most a whole document and
// its framing; a Content-Length past this is refused before anything is allocated for it, so a
// broken or hostile client cannot make the server reserve gigabytes. 64 MiB is far above any source
// file the frontend handles in an editor's time.
inline constexpr size_t kLspMessageBytes = size_t{64} << 20;
// Header lines of one message (Content-Length, Content-Type): a longer line is not a header.
inline constexpr size_t kLspHeaderLine = 4096;

// Bytecode. Slot and loop numbers are 16-bit instruction operands.
inline constexpr uint32_t kFrameSlots = 60000;       // frame + call area of one function
inline constexpr uint32_t kLoopsPerFunction = 65534; // loop ids fit below 0xFFFF (no loop, while loading)

// Running.
inline constexpr size_t kStackSlots = size_t{1} << 22;  // 32 MiB slot stack per machine
inline constexpr size_t kCallDepth = 200000;             // nested calls (a runaway recursion)
// Slots the code of inlined calls (ir/inline.cpp) may use past what a call of its function checks
// for: the slot stack keeps this many spare slots past its end.
inline constexpr uint32_t kInlineSlots = 128;
// A call a host may cancel (vm::RunOptions::cancel: pure-serve's --query-timeout-ms, a client
// that left) gets its step budget in slices of this many steps; only when a slice runs out does
// the VM look at the cancel flag (vm/calls.cpp: budget_spent), so the loops pay nothing for it.
// 2^20 steps take about a millisecond: a cancelled query stops that soon after the flag is set.
inline constexpr int64_t kStepSlice = int64_t{1} << 20;
// A migrate block's own step budget (docs/upgrades.md, "Migrations"): it runs once, at the upgrade,
// over every old row, so it gets more than an event (pure-run --migration-steps sets another).
inline constexpr uint64_t kMigrationSteps = 100'000'000'000ull;
inline constexpr uint32_t kTextBytes = 1u << 30;         // longest text (1 GiB)
inline constexpr const char* kTextBytesText = "1 GiB";  // kTextBytes as messages name it
static_assert(kTextBytes == 1u << 30, "kTextBytesText names kTextBytes");
inline constexpr int64_t kListRows = int64_t{1} << 28;  // items in one event list
// Checked builds (PURE_CHECKS) run the B+tree checker after each commit on every stored list of at
// most this many rows: it reads every row, so larger lists would make checked test runs quadratic.
inline constexpr int64_t kCheckedCommitRows = 256;
// The LLVM JIT (jit-llvm/llvm_backend.cpp): the most LLVM instructions one loop's function may
// have, as lowered and before optimisation; a larger loop stays interpreted (the loops nested in
// it compile on their own). LLVM's O2 pipeline and code generator take time superlinear in a
// function's size: every loop of the examples and kernels is under it (the largest, 3,353, took
// 120-130 ms of processor time on the shared 2-core machine), where one of 11,769 took 330 ms and
// one of 13,596 (fannkuch's outer loop) 580 ms (bench/README.md, "Bounded compiles").
inline constexpr uint64_t kJitLoopIr = 4000;
// The LLVM JIT's persistent code cache (PURE_JIT_CACHE=DIR, jit-llvm/code_cache.h): the most bytes
// its entries may take in the directory; a store over it removes the least recently used. A loop's
// entry is 1-20 KB (an object file: the kernels' loops 1.4-7.5 KB, jit-llvm/README.md), so 64 MiB keeps thousands of
// loops, more than a machine's programs compile, while a directory of them stays small next to a
// user's cache; one entry larger than it is never kept.
inline constexpr uint64_t kJitCacheBytes = uint64_t{64} << 20;

// Hosting. A module's name is a URL path segment, a directory name inside --data and a metric
// label; 64 bytes keeps every file name in its directory far below NAME_MAX (255).
inline constexpr size_t kModuleNameBytes = 64;

// Memory (tools/memory_budget.h). The default memory budget is this share of the smallest of
// physical memory, the cgroup limit and the address space RLIMIT_AS leaves. Half, because the
// budget counts bytes held, not the process's footprint: a list that grows copies into a buffer
// twice the size while the old one lives, the allocator keeps slack and whole segments, snapshots
// that queries and checkpoints hold keep old nodes alive, and a reply is built beside the result;
// at half, a run that spends its budget still has the other half for all that, so the budget's
// clear error comes before the allocator's refusal or the kernel's OOM killer.
inline constexpr double kMemoryBudgetShare = 0.5;
inline constexpr uint64_t kMemoryBudgetFloor = uint64_t{16} << 20;    // never less (a tiny ulimit -v)
inline constexpr uint64_t kMemoryBudgetUnknown = uint64_t{4} << 30;   // when the machine tells nothing
// A reply of pure-serve (--max-reply's default): far beyond any page a client reads at once, far
// below what building it could cost the server.
inline constexpr uint64_t kReplyBytes = uint64_t{64} << 20;

// History (docs/history.md). Each checkpoint is a whole copy of the state: kept for every
// checkpoint of a week's retention they would take hundreds of copies. Besides the newest,
// retention keeps the oldest checkpoint the retained log can be replayed from (without it the
// oldest history could not be read as of a point) and at most this many of the newest others
// (reads as of a recent point replay from near it); the rest go at the next checkpoint.
inline constexpr size_t kHistoryCheckpoints = 3;
// GET /v1/NAME/events: records per page (the default page is 100). A page of 1000 records of
// small arguments is well under a megabyte of JSON.
inline constexpr size_t kHistoryPageRecords = 1000;
// Log bytes one page request reads at most: a filter (event=, since=) that matches little would
// otherwise read the whole retained history for one request. Past it the page ends early with a
// cursor (next_after) where the scan stopped.
inline constexpr uint64_t kHistoryScanBytes = uint64_t{256} << 20;

// Reads as of a past point (docs/history.md): pure-serve keeps the last this many past states it
// built (as_of=SEQ), so a client paging a list or running several queries at one point builds it
// once. Each is a whole copy of a module's state as it was: two are enough for one client going
// back and forth, and keep the memory bounded at two copies however many points are asked for
// (one more may be in use by a running query, or being built: one build at a time).
inline constexpr size_t kAsOfStates = 2;

// Backups (docs/history.md, "Backups and restore"). A backup's name is one directory entry inside
// --backup-dir, long enough for the names the server gives: MODULE-SEQUENCE (a request without a
// name) and auto-MODULE-SEQUENCE (--backup-every) with a module name of kModuleNameBytes. A backup holds every retained file of the module's
// directory: a week of 64 MiB segments at a busy server's pace is a few thousand files; past this
// many the backup is refused (a 500 naming the count) rather than run for hours on a query thread.
inline constexpr size_t kBackupNameBytes = 128;
inline constexpr size_t kBackupFiles = 100000;
// pure-serve --backup-keep's default: a day of hourly scheduled backups of each module. Its bound:
// a root listing stays small (each backup is a directory of hard links).
inline constexpr size_t kScheduledBackupsKept = 24;
inline constexpr size_t kScheduledBackupsKeptMax = 10000;
// Bytes a copy moves per read and write (a file copied when a hard link is not possible).
inline constexpr size_t kBackupCopyChunk = size_t{1} << 20;
// A backup or restore starts again from a fresh listing when retention deletes a file it was about
// to link (a checkpoint ran meanwhile); this many times, then it fails naming the file.
inline constexpr int kBackupAttempts = 5;

// Idempotency keys (docs/history.md#idempotency-keys). A key is logged with its event's record
// (with the event's encoded result), so it is short: 255 bytes hold a UUID, a hash or a client's
// own "order-1234-attempt" with room to spare, and fit the record's one-byte length.
inline constexpr size_t kIdempotencyKeyBytes = 255;
// The window a retry is recognised in: the last this many keyed events (older keys are forgotten,
// oldest first) that also committed within kIdempotencyWindowMs. Each key held costs its bytes, a
// hash of the arguments and the event's encoded result: 100,000 keys of small results are a few
// tens of MiB at most. On restart the table is rebuilt from the retained log of that window.
inline constexpr size_t kIdempotencyKeys = 100000;
inline constexpr uint64_t kIdempotencyWindowMs = uint64_t{24} * 3600 * 1000;  // 24 hours

// Imports (`use "lib.pure"`, docs/tooling.md). A chain of `use` deeper than this, or more files in
// one module than this, is refused with a located error: real programs import a handful of files a
// level or two deep, and the bounds keep a mistaken or hostile tree (every file importing many
// others) from making one compile read and check without end.
inline constexpr size_t kImportDepth = 16;
inline constexpr size_t kImportFiles = 64;

// Replication on NATS JetStream (cluster/, docs/cluster.md). A JetStream API request (stream info,
// the lease's get and compare-and-set) waits this long for its answer: long enough for a NATS
// cluster electing a new leader after a node died, short enough that a lease tick is not missed
// by much. A node starting tries to make (or find) its stream and lease bucket for
// kClusterStartMs: a NATS cluster just started takes a few seconds to elect its JetStream leader.
inline constexpr uint64_t kClusterRequestMs = 2000;
inline constexpr uint64_t kClusterStartMs = 30000;
// A follower submits at most this many of the stream's events ahead of what its owner has made
// visible: the owner's queue (--max-queue, 100,000 by default) never fills with them, and a burst
// of the stream is a few thousand events at most.
inline constexpr uint64_t kClusterApplyAhead = 10000;
// A read with min_seq=N waits at most this long for the node to have applied event N, then answers
// 503 naming the sequence it has: a follower a few seconds behind is an outage, not a wait.
inline constexpr uint64_t kMinSeqWaitMs = 5000;

}  // namespace pure::limits
