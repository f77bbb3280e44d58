// host/recovery.cpp — opening a data directory: the newest checkpoint, then a replay of the log
// records after it; a torn last record is cut, any other damage stops the start with the file and
// byte offset. Then the log starts where recovery left it.
// The manifest (manifest.h) is checked first: a segment or checkpoint it records that is gone stops
// the start, naming the file. Depends on host.h, file_io.h, log_format.h, log_writer.h,
// manifest.h, bytes.h.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "host/bytes.h"
#include "host/file_io.h"
#include "host/log_format.h"
#include "host/log_writer.h"
#include "host/manifest.h"
#include "host/versions.h"

namespace pure::host {

namespace {

std::string at(const std::string& path, uint64_t offset) { return path + ": offset " + std::to_string(offset) + ": "; }

// The offset of the first record after `from` that decodes and could belong to this log
// (sequence above `after`), or -1. A damaged record followed by such a record is corruption; a
// damaged record followed by nothing valid is a torn tail.
int64_t find_later_record(std::string_view bytes, uint64_t from, uint64_t after, uint32_t version, uint64_t* sequence) {
  uint64_t size = bytes.size();
  const uint64_t fixed = record_fixed_bytes(version);
  const uint64_t min_record = kRecordPrefixBytes + fixed;
  uint64_t plausible = after + (size - std::min(size, from)) / min_record + 1;
  for (uint64_t y = from; y + min_record <= size; ++y) {
    uint32_t length = get_u32(bytes.data() + y);
    if (length < fixed || length > size - y - kRecordPrefixBytes) continue;
    uint64_t s = get_u64(bytes.data() + y + 8);
    if (s <= after || s > plausible) continue;
    DecodedRecord r;
    if (decode_record(bytes, y, &r, version) == RecordCheck::Ok) {
      *sequence = r.sequence;
      return static_cast<int64_t>(y);
    }
  }
  return -1;
}

// A segment recovery does not replay (history the checkpoint covers): its header is checked and
// the commit time of its first record read (0 when unknown: a version 1 segment, or no record).
Status read_history_segment_start(FileSystem& fs, const std::string& path, uint64_t module_identity, uint64_t first,
                                  uint64_t* first_time) {
  std::unique_ptr<File> f;
  if (Status s = fs.open(path, OpenMode::Read, &f); !s.ok()) return s;
  std::string bytes(kSegmentHeaderBytes + kRecordPrefixBytes + kRecordFixedBytesV2, '\0');  // through the time
  size_t got = 0;
  if (Status s = f->read_at(0, bytes.data(), bytes.size(), &got); !s.ok()) return s;
  bytes.resize(got);
  SegmentHeader header;
  if (std::string problem = decode_segment_header(bytes, &header); !problem.empty())
    return Status::failure(at(path, 0) + problem);
  if (header.module_identity != module_identity)
    return Status::failure(path + ": this log was written by module " + hex64(header.module_identity) +
                           ", not by this module (" + hex64(module_identity) + ")");
  if (header.first_sequence != first)
    return Status::failure(at(path, 24) + "header says the first sequence is " + std::to_string(header.first_sequence) +
                           ", the file name says " + std::to_string(first));
  *first_time = 0;
  if (header.version != 1 && bytes.size() == kSegmentHeaderBytes + kRecordPrefixBytes + kRecordFixedBytesV2)
    *first_time = get_u64(bytes.data() + kSegmentHeaderBytes + kRecordPrefixBytes + 12);
  return {};
}

Status recover_into(FileSystem& fs, const std::string& dir, const OpenOptions& options,
                    std::unique_ptr<rt::Store>* store_out, RecoveryReport* report, LogStart* start) {
  auto started = std::chrono::steady_clock::now();
  *report = RecoveryReport{};
  std::vector<std::string> names;
  if (Status s = fs.list_dir(dir, &names); !s.ok()) return s;
  std::sort(names.begin(), names.end());

  // A checkpoint or manifest that never got its final name was never promised to anyone.
  bool removed = false;
  bool have_manifest = false;
  std::vector<std::pair<uint64_t, std::string>> segments;
  std::optional<uint64_t> newest_checkpoint;
  for (const std::string& name : names) {
    if ((name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0 && name.rfind("checkpoint-", 0) == 0) ||
        name == kManifestTempName) {
      if (Status s = fs.unlink(join_path(dir, name)); !s.ok()) return s;
      removed = true;
    } else if (auto seq = parse_segment_name(name)) {
      segments.emplace_back(*seq, name);
    } else if (auto ck = parse_checkpoint_name(name)) {
      if (!newest_checkpoint || *ck > *newest_checkpoint) newest_checkpoint = ck;
    } else if (name == kManifestName) {
      have_manifest = true;
    }
  }
  if (removed)
    if (Status s = fs.sync_dir(dir); !s.ok()) return s;

  // The manifest says what must be here; anything it records that is gone is a refusal before any
  // replay (or, accepted, the report's data_loss).
  ManifestState manifest;
  if (have_manifest) {
    std::string path = join_path(dir, kManifestName);
    std::string bytes;
    if (Status s = read_file(fs, path, &bytes); !s.ok()) return s;
    if (std::string problem = decode_manifest(bytes, &manifest); !problem.empty())
      return Status::failure(at(path, 0) + problem);
  } else {
    report->manifest_missing = !segments.empty() || newest_checkpoint.has_value();
  }
  std::vector<std::string> missing;
  if (manifest.checkpoint && (!newest_checkpoint || *newest_checkpoint < manifest.checkpoint))
    missing.push_back(checkpoint_name(manifest.checkpoint));
  if (manifest.newest_segment &&
      std::none_of(segments.begin(), segments.end(), [&](const auto& seg) { return seg.first == manifest.newest_segment; }))
    missing.push_back(segment_name(manifest.newest_segment));
  if (!missing.empty()) {
    std::string what = missing[0] + (missing.size() > 1 ? " and " + missing[1] + " are" : " is");
    std::string message = dir + ": " + what + " missing (the manifest records " + (missing.size() > 1 ? "them" : "it") +
                          (manifest.durable ? "; events through sequence " + std::to_string(manifest.durable) +
                                                  " were durable)"
                                            : std::string(")"));
    if (!options.accept_data_loss) return Status::failure(message);
    report->data_loss = message;
  }

  std::unique_ptr<rt::Store> store;
  uint64_t checkpoint = 0;
  // A versioned directory: the checkpoint's version gives the schema it is read with and the code
  // that replays the records after it, until a version record switches both.
  const bool versioned = static_cast<bool>(options.version_code);
  const VersionCode* code = nullptr;
  uint32_t version = 0;
  std::vector<rt::ListSchema> schemas = options.schemas;
  if (versioned) {
    version = options.version_at(newest_checkpoint.value_or(0));
    if (Status s = options.version_code(version, &code); !s.ok()) return s;
    schemas = code->schemas();
  }
  if (newest_checkpoint) {
    std::string path = join_path(dir, checkpoint_name(*newest_checkpoint));
    if (Status s = read_checkpoint(fs, path, options.module_identity, schemas, &store, &checkpoint); !s.ok())
      return s;
    if (checkpoint != *newest_checkpoint)
      return Status::failure(path + ": names sequence " + std::to_string(*newest_checkpoint) + " but its footer says " +
                             std::to_string(checkpoint));
  } else {
    store = rt::make_store(schemas);
  }
  report->checkpoint_sequence = checkpoint;

  RecoveryProgress progress;
  // A segment all of whose records the checkpoint holds (the next segment begins at or before the
  // checkpoint's next sequence) is history: kept for the audit trail, not read here beyond its
  // header and first record (for its size and first commit time, which retention needs).
  auto covered = [&](size_t i) { return i + 1 < segments.size() && segments[i + 1].first - 1 <= checkpoint; };
  std::vector<uint64_t> sizes(segments.size(), 0);
  for (size_t i = 0; i < segments.size(); ++i) {
    std::unique_ptr<File> f;
    if (Status s = fs.open(join_path(dir, segments[i].second), OpenMode::Read, &f); !s.ok()) return s;
    if (Status s = f->size(&sizes[i]); !s.ok()) return s;
    if (!covered(i)) progress.bytes_total += sizes[i];
  }

  uint64_t previous = 0;  // the last record's sequence so far
  uint64_t next_report = options.progress_every;
  std::string bytes;
  start->segments.clear();
  start->continue_last = false;
  uint64_t last_time = 0;  // the last record's commit time
  for (size_t i = 0; i < segments.size(); ++i) {
    const auto& [first, name] = segments[i];
    bool last = i + 1 == segments.size();
    std::string path = join_path(dir, name);
    if (covered(i)) {
      SegmentRef ref{first, name, sizes[i], 0};
      if (Status s = read_history_segment_start(fs, path, options.module_identity, first, &ref.first_time); !s.ok())
        return s;
      start->segments.push_back(ref);
      continue;
    }
    if (Status s = read_file(fs, path, &bytes); !s.ok()) return s;
    SegmentHeader header;
    std::string problem = decode_segment_header(bytes, &header);
    if (!problem.empty()) {
      if (last && bytes.size() <= kSegmentHeaderBytes) {
        // The crash came while the segment was being created: it never held a record.
        if (Status s = fs.unlink(path); !s.ok()) return s;
        if (Status s = fs.sync_dir(dir); !s.ok()) return s;
        report->torn_bytes_cut += bytes.size();
        break;
      }
      return Status::failure(at(path, 0) + problem);
    }
    if (header.module_identity != options.module_identity)
      return Status::failure(path + ": this log was written by module " + hex64(header.module_identity) +
                             ", not by this module (" + hex64(options.module_identity) +
                             "); a changed module cannot continue an old log");
    if (header.first_sequence != first)
      return Status::failure(at(path, 24) + "header says the first sequence is " +
                             std::to_string(header.first_sequence) + ", the file name says " + std::to_string(first));

    uint64_t offset = kSegmentHeaderBytes;
    bool first_record = true;
    uint64_t first_record_time = 0;
    while (offset < bytes.size()) {
      DecodedRecord r;
      RecordCheck check = decode_record(bytes, offset, &r, header.version);
      if (check != RecordCheck::Ok) {
        if (!last) return Status::failure(at(path, offset) + describe(check) + " (not the last segment: the log is damaged)");
        uint64_t later_sequence = 0;
        int64_t later = find_later_record(bytes, offset + 1, previous, header.version, &later_sequence);
        if (later >= 0)
          return Status::failure(at(path, offset) + describe(check) + ", but a valid record (sequence " +
                                 std::to_string(later_sequence) + ") follows at offset " + std::to_string(later) +
                                 ": the log is damaged, not torn");
        // A torn last record: cut it (and anything after it) so appends continue cleanly.
        std::unique_ptr<File> f;
        if (Status s = fs.open(path, OpenMode::ReadWrite, &f); !s.ok()) return s;
        if (Status s = f->truncate(offset); !s.ok()) return s;
        if (Status s = f->datasync(); !s.ok()) return s;
        report->torn_bytes_cut += bytes.size() - offset;
        bytes.resize(offset);
        break;
      }
      if (first_record && r.sequence != header.first_sequence)
        return Status::failure(at(path, offset) + "first record has sequence " + std::to_string(r.sequence) +
                               ", the segment header says " + std::to_string(header.first_sequence));
      first_record = false;
      if (r.sequence <= previous)
        return Status::failure(at(path, offset) + "sequence " + std::to_string(r.sequence) + " follows " +
                               std::to_string(previous) + ": the log is damaged");
      // Missing sequences are allowed only inside what the checkpoint already holds.
      if (r.sequence != previous + 1 && r.sequence - 1 > checkpoint)
        return Status::failure(at(path, offset) + "sequence gap: expected " + std::to_string(std::max(previous, checkpoint) + 1) +
                               ", found " + std::to_string(r.sequence) + "; records are missing");
      if (r.sequence > checkpoint && r.event == kVersionEvent) {
        // From here on, the next version: its code, and its schema (the store transformed).
        if (!versioned)
          return Status::failure(at(path, offset) + "sequence " + std::to_string(r.sequence) +
                                 " is a version record, but this directory is opened without its versions");
        uint32_t next = r.args.size() == 4 ? get_u32(r.args.data()) : 0;
        if (next != version + 1 || options.version_at(r.sequence) != next)
          return Status::failure(at(path, offset) + "sequence " + std::to_string(r.sequence) + " starts version " +
                                 std::to_string(next) + ", but the directory is at version " + std::to_string(version) +
                                 " and its version files place version " +
                                 std::to_string(options.version_at(r.sequence)) + " there");
        const VersionCode* next_code = nullptr;
        if (Status s = options.version_code(next, &next_code); !s.ok()) return s;
        if (Status s = upgrade_version(*code, *next_code, &store); !s.ok())
          return Status::failure(at(path, offset) + "upgrading to version " + std::to_string(next) + ": " + s.error);
        code = next_code;
        version = next;
        ++report->records_replayed;
      } else if (r.sequence > checkpoint && r.failed) {
        // An audit-only record (--audit-failed): the event changed nothing; its sequence counts.
      } else if (r.sequence > checkpoint) {
        const ApplyEvent& apply = versioned ? code->apply : options.apply;
        std::string error = apply(*store, LogRecord{r.sequence, r.event, r.args});
        if (!error.empty())
          return Status::failure(at(path, offset) + "replaying sequence " + std::to_string(r.sequence) + " (event " +
                                 std::to_string(r.event) + ") failed: " + error);
        ++report->records_replayed;
        progress.records_replayed = report->records_replayed;
        if (options.progress && report->records_replayed >= next_report) {
          progress.bytes_read += offset;  // an estimate within the current segment
          options.progress(progress);
          progress.bytes_read -= offset;
          next_report += options.progress_every;
        }
      }
      if (first_record_time == 0) first_record_time = r.time_ms;
      previous = r.sequence;
      last_time = std::max(last_time, r.time_ms);
      offset += r.size;
    }
    // An empty segment says where the log had reached when it began: records before it are missing.
    if (first_record && header.first_sequence - 1 > std::max(previous, checkpoint))
      return Status::failure(at(path, kSegmentHeaderBytes) + "sequence gap: the segment begins at sequence " +
                             std::to_string(header.first_sequence) + " but the log before it ends at " +
                             std::to_string(std::max(previous, checkpoint)) + "; records are missing");
    progress.bytes_read += bytes.size();
    start->segments.push_back({first, name, bytes.size(), first_record_time});
    if (last) {
      uint64_t next_in_segment = first_record ? header.first_sequence : previous + 1;
      // A segment of an older version is never appended to: the log goes on in a new one.
      start->continue_last = next_in_segment == std::max(previous, checkpoint) + 1 &&
                             offset < options.log.segment_bytes && header.version == kLogVersion;
      start->last_end = bytes.size();
    }
  }
  start->next_sequence = std::max(previous, checkpoint) + 1;
  start->checkpoint_sequence = checkpoint;
  start->last_time = last_time;
  report->last_sequence = start->next_sequence - 1;
  report->version = version;
  if (have_manifest && manifest.module_identity != options.module_identity)
    return Status::failure(join_path(dir, kManifestName) + ": this data directory was written by module " +
                           hex64(manifest.module_identity) + ", not by this module (" + hex64(options.module_identity) +
                           "); a changed module cannot continue an old log");
  if (report->last_sequence < manifest.durable) {
    std::string message = dir + ": the log ends at sequence " + std::to_string(report->last_sequence) +
                          ", but the manifest records events through sequence " + std::to_string(manifest.durable) +
                          " as durable: records " + std::to_string(report->last_sequence + 1) + ".." +
                          std::to_string(manifest.durable) + " are missing";
    if (!options.accept_data_loss) return Status::failure(message);
    report->data_loss += (report->data_loss.empty() ? "" : "; ") + message;
  }
  report->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  *store_out = std::move(store);
  return {};
}

}  // namespace

std::string RecoveryReport::summary() const {
  char seconds_text[32];
  std::snprintf(seconds_text, sizeof seconds_text, "%.3f", seconds);
  std::string s = "recovered through sequence " + std::to_string(last_sequence) + ": ";
  s += checkpoint_sequence ? "checkpoint " + std::to_string(checkpoint_sequence) : std::string("no checkpoint");
  s += ", " + std::to_string(records_replayed) + " records replayed in " + seconds_text + " s";
  if (torn_bytes_cut) s += ", " + std::to_string(torn_bytes_cut) + " bytes of a torn tail cut";
  return s;
}

Status recover(FileSystem& fs, const std::string& dir, const OpenOptions& options, std::unique_ptr<rt::Store>* store,
               RecoveryReport* report) {
  LogStart start;
  return recover_into(fs, dir, options, store, report, &start);
}

Status open_module(FileSystem& fs, const std::string& dir, OpenOptions options, OpenedModule* out) {
  if (!options.apply && !options.version_code) return Status::failure(dir + ": open_module needs an apply function");
  std::vector<std::string> existing;
  if (!fs.list_dir(dir, &existing).ok()) {
    // A new data directory: its own entry must be durable before anything in it is promised.
    if (Status s = fs.make_dir(dir); !s.ok()) return s;
    size_t slash = dir.find_last_not_of('/') == std::string::npos ? std::string::npos
                                                                  : dir.rfind('/', dir.find_last_not_of('/'));
    std::string parent = slash == std::string::npos ? "." : slash == 0 ? "/" : dir.substr(0, slash);
    if (Status s = fs.sync_dir(parent); !s.ok()) return s;
  }
  LogStart start;
  if (Status s = recover_into(fs, dir, options, &out->store, &out->report, &start); !s.ok()) return s;
  if (options.before_log && !options.before_log(out->report, *out->store)) return {};
  return start_log(fs, dir, options.module_identity, options.log, std::move(options.on_durable), start, &out->log);
}

}  // namespace pure::host
