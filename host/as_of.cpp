// host/as_of.cpp — a data directory's state as of a past sequence (as_of.h): the checkpoint at or
// before it, then the records after it replayed up to it, read only. Depends on as_of.h,
// file_io.h, log_format.h, bytes.h, versions.h.
#include "host/as_of.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "host/bytes.h"
#include "host/file_io.h"
#include "host/log_format.h"
#include "host/state_compare.h"

namespace pure::host {

namespace {

std::string at(const std::string& path, uint64_t offset) { return path + ": offset " + std::to_string(offset) + ": "; }

using Listing = DirListing;

uint32_t version_at(const std::vector<VersionFile>& versions, uint64_t sequence) {
  uint32_t v = 1;
  for (const VersionFile& f : versions)
    if (f.begins <= sequence) v = f.number;
  return v;
}

// One attempt from one listing. *vanished: a file of the listing was gone when opened (retention
// removed it meanwhile): the caller lists again.
Status attempt(FileSystem& fs, const std::string& dir, uint64_t sequence, const AsOfCode& code, AsOfState* out,
               AsOfProblem* problem, bool* vanished) {
  *vanished = false;
  Listing l;
  if (Status s = list_data_dir(fs, dir, &l); !s.ok()) return (*problem = AsOfProblem::Damaged), s;
  out->oldest = l.oldest();
  if (out->oldest == UINT64_MAX) {
    *problem = AsOfProblem::PastRetention;
    return Status::failure(dir + ": no checkpoint and no log from sequence 1: nothing can be read as of a point");
  }
  if (sequence < out->oldest) {
    *problem = AsOfProblem::PastRetention;
    return Status::failure("sequence " + std::to_string(sequence) + " is past the retention window: the oldest "
                           "sequence this directory can be read as of is " + std::to_string(out->oldest));
  }
  // The newest checkpoint at or before the sequence (0: the empty state, the log from 1).
  uint64_t checkpoint = 0;
  for (uint64_t c : l.checkpoints)
    if (c <= sequence && c <= code.start_at_most) checkpoint = c;
  *problem = AsOfProblem::Damaged;
  uint32_t version = version_at(code.versions, checkpoint);
  const VersionCode* vc = nullptr;
  if (Status s = code.version_code(version, &vc); !s.ok()) return s;
  std::unique_ptr<rt::Store> store;
  if (checkpoint) {
    std::string name = checkpoint_name(checkpoint);
    uint64_t through = 0;
    if (Status s = read_checkpoint(fs, join_path(dir, name), code.module_identity, vc->schemas(), &store, &through);
        !s.ok()) {
      *vanished = !still_listed(fs, dir, name);
      return s;
    }
    if (through != checkpoint)
      return Status::failure(join_path(dir, name) + ": names sequence " + std::to_string(checkpoint) +
                             " but its footer says " + std::to_string(through));
  } else {
    store = rt::make_store(vc->schemas());
  }
  uint64_t previous = checkpoint;  // the last sequence in the state
  std::string bytes;
  for (size_t i = 0; i < l.segments.size() && previous < sequence; ++i) {
    const auto& [first, name] = l.segments[i];
    if (i + 1 < l.segments.size() && l.segments[i + 1].first - 1 <= previous) continue;  // all in the state
    if (first > previous + 1) break;  // a gap: reported below
    std::string path = join_path(dir, name);
    if (Status s = read_file(fs, path, &bytes); !s.ok()) {
      *vanished = !still_listed(fs, dir, name);
      return s;
    }
    SegmentHeader header;
    if (std::string bad = decode_segment_header(bytes, &header); !bad.empty()) return Status::failure(at(path, 0) + bad);
    if (header.module_identity != code.module_identity)
      return Status::failure(path + ": this log was written by module " + hex64(header.module_identity) +
                             ", not by this module (" + hex64(code.module_identity) + ")");
    uint64_t offset = kSegmentHeaderBytes;
    while (offset < bytes.size() && previous < sequence) {
      DecodedRecord r;
      RecordCheck check = decode_record(bytes, offset, &r, header.version);
      if (check != RecordCheck::Ok)  // every record up to `sequence` is durable, so whole
        return Status::failure(at(path, offset) + describe(check));
      if (r.sequence <= previous) {
        offset += r.size;
        continue;
      }
      if (r.sequence != previous + 1)
        return Status::failure(at(path, offset) + "sequence gap: expected " + std::to_string(previous + 1) + ", found " +
                               std::to_string(r.sequence) + "; records are missing");
      if (r.event == kVersionEvent) {
        uint32_t next = r.args.size() == 4 ? get_u32(r.args.data()) : 0;
        if (next != version + 1)
          return Status::failure(at(path, offset) + "sequence " + std::to_string(r.sequence) + " starts version " +
                                 std::to_string(next) + ", but the state is at version " + std::to_string(version));
        const VersionCode* next_code = nullptr;
        if (Status s = code.version_code(next, &next_code); !s.ok()) return s;
        if (Status s = upgrade_version(*vc, *next_code, &store); !s.ok())
          return Status::failure(at(path, offset) + "upgrading to version " + std::to_string(next) + ": " + s.error);
        vc = next_code;
        version = next;
      } else if (!r.failed) {  // a failed record (--audit-failed) changed nothing
        std::string error = vc->apply(*store, LogRecord{r.sequence, r.event, r.args});
        if (!error.empty())
          return Status::failure(at(path, offset) + "replaying sequence " + std::to_string(r.sequence) + " (event " +
                                 std::to_string(r.event) + ") failed: " + error);
      }
      ++out->records_replayed;
      previous = r.sequence;
      offset += r.size;
    }
  }
  if (previous < sequence)
    return Status::failure(dir + ": the log held from checkpoint " + std::to_string(checkpoint) + " ends at sequence " +
                           std::to_string(previous) + ", before sequence " + std::to_string(sequence));
  // Today's code reads it: brought to the version asked for, one upgrade at a time, as replay
  // would have brought it had the log gone on.
  for (uint32_t v = version; v < code.present_in; ++v) {
    const VersionCode* next_code = nullptr;
    if (Status s = code.version_code(v + 1, &next_code); !s.ok()) return s;
    if (Status s = upgrade_version(*vc, *next_code, &store); !s.ok())
      return Status::failure(dir + ": presenting sequence " + std::to_string(sequence) + " in version " +
                             std::to_string(v + 1) + ": " + s.error);
    vc = next_code;
  }
  out->store = std::move(store);
  out->sequence = sequence;
  out->checkpoint = checkpoint;
  out->version = version;
  *problem = AsOfProblem::None;
  return {};
}

}  // namespace

Status oldest_readable(FileSystem& fs, const std::string& dir, uint64_t* oldest) {
  Listing l;
  if (Status s = list_data_dir(fs, dir, &l); !s.ok()) return s;
  *oldest = l.oldest();
  if (*oldest == UINT64_MAX) return Status::failure(dir + ": no checkpoint and no log from sequence 1");
  return {};
}

Status read_state_as_of(FileSystem& fs, const std::string& dir, uint64_t sequence, uint64_t through,
                        const AsOfCode& code, AsOfState* out, AsOfProblem* problem) {
  auto started = std::chrono::steady_clock::now();
  *out = AsOfState{};
  if (sequence > through) {
    *problem = AsOfProblem::Future;
    Listing l;
    if (list_data_dir(fs, dir, &l).ok()) out->oldest = l.oldest();
    return Status::failure("sequence " + std::to_string(sequence) + " is beyond the present: the newest durable "
                           "sequence is " + std::to_string(through));
  }
  Status s;
  // Retention deletes history only oldest first, and only after a newer checkpoint is in place:
  // a listing taken again finds what the vanished file covered elsewhere, or finds it past retention.
  for (int tries = 0; tries < 3; ++tries) {
    bool vanished = false;
    AsOfState state;
    s = attempt(fs, dir, sequence, code, &state, problem, &vanished);
    if (s.ok() || !vanished) {
      if (!s.ok()) {
        out->oldest = state.oldest;
        return s;
      }
      *out = std::move(state);
      out->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      return s;
    }
  }
  return s;
}

Status verify_directory(FileSystem& fs, const std::string& dir, const AsOfCode& code, VerifyReport* out) {
  *out = VerifyReport{};
  Listing l;
  if (Status s = list_data_dir(fs, dir, &l); !s.ok()) return s;
  if (l.segments.empty() && l.checkpoints.empty())
    return Status::failure(dir + ": not a data directory: it has no log segments and no checkpoints");
  // 1. Every segment, every record's checksum, sequences in order without a gap.
  std::string bytes;
  uint64_t previous = 0;
  for (const auto& [first, name] : l.segments) {
    std::string path = join_path(dir, name);
    if (Status s = read_file(fs, path, &bytes); !s.ok()) return s;
    SegmentHeader header;
    if (std::string bad = decode_segment_header(bytes, &header); !bad.empty()) return Status::failure(at(path, 0) + bad);
    if (header.module_identity != code.module_identity)
      return Status::failure(path + ": this log was written by module " + hex64(header.module_identity) +
                             ", not by this module (" + hex64(code.module_identity) + ")");
    if (header.first_sequence != first)
      return Status::failure(at(path, 24) + "header says the first sequence is " + std::to_string(header.first_sequence) +
                             ", the file name says " + std::to_string(first));
    if (previous && first != previous + 1)
      return Status::failure(at(path, 0) + "sequence gap: the segment begins at sequence " + std::to_string(first) +
                             " but the log before it ends at " + std::to_string(previous));
    uint64_t offset = kSegmentHeaderBytes;
    uint64_t expect = first;
    while (offset < bytes.size()) {
      DecodedRecord r;
      RecordCheck check = decode_record(bytes, offset, &r, header.version);
      if (check != RecordCheck::Ok) return Status::failure(at(path, offset) + describe(check));
      if (r.sequence != expect)
        return Status::failure(at(path, offset) + "sequence " + std::to_string(r.sequence) + " where " +
                               std::to_string(expect) + " was expected");
      if (!out->first_sequence) out->first_sequence = r.sequence;
      out->last_sequence = r.sequence;
      ++out->records;
      ++expect;
      offset += r.size;
    }
    previous = expect - 1;
    ++out->segments;
  }
  out->lines.push_back(std::to_string(out->segments) + (out->segments == 1 ? " log segment, " : " log segments, ") +
                       std::to_string(out->records) + (out->records == 1 ? " record" : " records") +
                       (out->records ? " (sequences " + std::to_string(out->first_sequence) + " to " +
                                           std::to_string(out->last_sequence) + ")"
                                     : std::string()) +
                       ": every checksum good, no gap");
  // 2. Every checkpoint, read whole with its version's lists.
  for (uint64_t c : l.checkpoints) {
    const VersionCode* vc = nullptr;
    if (Status s = code.version_code(version_at(code.versions, c), &vc); !s.ok()) return s;
    std::unique_ptr<rt::Store> store;
    uint64_t through = 0;
    std::string path = join_path(dir, checkpoint_name(c));
    if (Status s = read_checkpoint(fs, path, code.module_identity, vc->schemas(), &store, &through); !s.ok()) return s;
    if (through != c)
      return Status::failure(path + ": names sequence " + std::to_string(c) + " but its footer says " +
                             std::to_string(through));
    ++out->checkpoints;
  }
  out->lines.push_back(std::to_string(out->checkpoints) + (out->checkpoints == 1 ? " checkpoint" : " checkpoints") +
                       (l.checkpoints.empty() ? std::string()
                                              : " (sequences " + std::to_string(l.checkpoints.front()) + " to " +
                                                    std::to_string(l.checkpoints.back()) + ")") +
                       ": every one read whole, every checksum good");
  // 3. The whole retained log replayed from the oldest starting point, a stretch at a time: each
  // from the checkpoint before it (already found equal to the replay) up to the next checkpoint,
  // whose state must then be the replayed one; the last stretch up to the end of the log.
  uint64_t last = std::max(out->last_sequence, l.checkpoints.empty() ? 0 : l.checkpoints.back());
  const uint64_t oldest = l.oldest();
  std::vector<uint64_t> ends;  // the checkpoints to compare (those after the oldest starting point), then the end
  for (uint64_t c : l.checkpoints)
    if (c > oldest) ends.push_back(c);
  if (ends.empty() || ends.back() != last) ends.push_back(last);
  for (uint64_t end : ends) {
    AsOfState state;
    AsOfProblem problem = AsOfProblem::None;
    AsOfCode own = code;
    own.present_in = 0;
    own.start_at_most = end == 0 ? 0 : end - 1;
    if (end <= oldest) {  // nothing to replay: the oldest starting point is the end
      ++out->replays;
      continue;
    }
    if (Status s = read_state_as_of(fs, dir, end, UINT64_MAX, own, &state, &problem); !s.ok()) return s;
    ++out->replays;
    out->records_replayed += state.records_replayed;
    if (!std::binary_search(l.checkpoints.begin(), l.checkpoints.end(), end)) continue;
    const VersionCode* vc = nullptr;
    if (Status s = code.version_code(version_at(code.versions, end), &vc); !s.ok()) return s;
    std::unique_ptr<rt::Store> saved;
    uint64_t through = 0;
    std::string path = join_path(dir, checkpoint_name(end));
    if (Status s = read_checkpoint(fs, path, code.module_identity, vc->schemas(), &saved, &through); !s.ok()) return s;
    if (std::string diff = compare_states(*saved->publish(), *state.store->publish()); !diff.empty())
      return Status::failure(path + ": the checkpoint's state is not the log's replayed to sequence " +
                             std::to_string(end) + ": " + diff + " (here: the checkpoint, there: the replay)");
    ++out->checkpoints_compared;
  }
  out->lines.push_back("replayed " + std::to_string(out->records_replayed) + " records in " +
                       std::to_string(out->replays) + (out->replays == 1 ? " stretch" : " stretches") +
                       " from sequence " + std::to_string(oldest) + " up to sequence " + std::to_string(last) +
                       ": every event applied; " + std::to_string(out->checkpoints_compared) +
                       (out->checkpoints_compared == 1 ? " checkpoint" : " checkpoints") +
                       " equal to the replayed state");
  return {};
}

}  // namespace pure::host
