// host/as_of.h — the state of a data directory as of a past sequence (docs/history.md, "Reads as
// of a point"): the newest retained checkpoint at or before it, then the log records after it up
// to that sequence replayed, each with the code of the version that committed it (as recovery
// does), into a fresh store. Read only: no lock, nothing written, cut, renamed or deleted, so it
// runs beside the directory's owner (pure-serve, pure-run --data). Depends on host.h, versions.h.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "host/host.h"
#include "host/versions.h"

namespace pure::host {

// What a past state is read with: the directory's identity and versions, and each version's code.
struct AsOfCode {
  uint64_t module_identity = 0;       // the directory's (its log and checkpoints carry it)
  std::vector<VersionFile> versions;  // every version, oldest first (empty: version 1 only)
  // The code of a version (compiled by the caller, who may keep it for the next read).
  std::function<Status(uint32_t version, const VersionCode** out)> version_code;
  // Present the state in this version's schema (upgrade_store from the version at the sequence,
  // one version at a time), so that today's queries read it; 0: leave it in its own version.
  uint32_t present_in = 0;
  // Start from the newest checkpoint at or before this sequence (and at or before the one asked
  // for): verify_directory replays up to a checkpoint from the one before it. UINT64_MAX: any.
  uint64_t start_at_most = UINT64_MAX;
};

// Why a past state could not be read.
enum class AsOfProblem : uint8_t {
  None,
  PastRetention,  // the sequence is older than anything retention kept: AsOfState::oldest is the oldest readable
  Future,         // the sequence is past `through` (the newest durable one)
  Damaged,        // a file is damaged or unreadable (the message names it and the offset)
};

struct AsOfState {
  std::unique_ptr<rt::Store> store;  // the state holding exactly events 1..sequence
  uint64_t sequence = 0;
  uint64_t checkpoint = 0;           // the checkpoint it started from (0: the empty state)
  uint64_t records_replayed = 0;
  uint32_t version = 0;              // the version in force at `sequence`
  uint64_t oldest = 0;               // the oldest sequence the directory can be read as of
  double seconds = 0;
};

// The oldest sequence DIR can be read as of (a retained checkpoint, or 0 when the log still starts
// at sequence 1); *none set when the directory holds neither.
Status oldest_readable(FileSystem& fs, const std::string& dir, uint64_t* oldest);

// Reads DIR's state as of `sequence` (which must be at most `through`, a sequence the caller knows
// is durable: records up to it are whole on disk). On failure *problem says which kind (the
// message says what, naming the file and offset of damage); out->oldest is set for PastRetention.
// A file that retention deletes while this reads is retried from a fresh listing.
Status read_state_as_of(FileSystem& fs, const std::string& dir, uint64_t sequence, uint64_t through,
                        const AsOfCode& code, AsOfState* out, AsOfProblem* problem);

// What verify_directory checked, for people: one line per kind of file and one for the replay.
struct VerifyReport {
  uint64_t segments = 0, records = 0, first_sequence = 0, last_sequence = 0;
  uint64_t checkpoints = 0;
  uint64_t replays = 0, records_replayed = 0;  // stretches replayed (each up to a checkpoint, or the end)
  uint64_t checkpoints_compared = 0;           // checkpoints found equal to the replay at their sequence
  std::vector<std::string> lines;
};

// Checks a data directory (a backup's copy, or any directory not being written): every log
// segment's header and every record's checksum, sequences without a gap; every checkpoint read
// whole (each block's checksum and the footer) with its version's lists; then the whole retained
// log replayed, from the oldest starting point (a checkpoint, or the empty state) to the end, with
// each record's own version's code, and the replayed state compared with every later checkpoint,
// row by row (compare_states): a checkpoint whose checksums are good but whose state is not the
// log's is caught, named with its sequence and the first difference. (Each stretch starts from
// the checkpoint before it, which was found equal to the replay up to it: the same as one replay
// from the oldest.) Read only. The first damage found is the error, naming the file and the offset.
Status verify_directory(FileSystem& fs, const std::string& dir, const AsOfCode& code, VerifyReport* out);

}  // namespace pure::host
