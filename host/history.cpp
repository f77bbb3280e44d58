// host/history.cpp — reading the audit trail from the segment files. Depends on history.h,
// file_io.h, log_format.h.
#include "host/history.h"

#include <algorithm>

#include "host/bytes.h"
#include "host/file_io.h"
#include "host/log_format.h"

namespace pure::host {

Status read_history(FileSystem& fs, const std::string& dir, uint64_t module_identity, const HistoryFilter& filter,
                    HistoryPage* out) {
  *out = HistoryPage{};
  std::vector<std::string> names;
  if (Status s = fs.list_dir(dir, &names); !s.ok()) return s;
  std::vector<std::pair<uint64_t, std::string>> segments;
  for (const std::string& name : names)
    if (auto first = parse_segment_name(name)) segments.emplace_back(*first, name);
  std::sort(segments.begin(), segments.end());
  const uint64_t last_wanted = std::min(filter.through, filter.before == 0 ? 0 : filter.before - 1);
  if (!segments.empty()) out->oldest = segments.front().first;
  std::string bytes;
  uint64_t previous = 0;  // the last record's sequence (0: none read yet)
  uint64_t scanned = 0;   // bytes of segments read
  for (size_t i = 0; i < segments.size(); ++i) {
    const auto& [first, name] = segments[i];
    const bool last = i + 1 == segments.size();
    // Segment i holds first .. (next first - 1): skip it whole when that is at or below `after`.
    if (!last && segments[i + 1].first - 1 <= filter.after) {
      previous = segments[i + 1].first - 1;
      continue;
    }
    if (first > last_wanted) break;
    if (scanned >= filter.max_scan_bytes && previous > filter.after) {
      out->next_after = previous;  // the scan's bound: the next page goes on from here
      return {};
    }
    std::string path = join_path(dir, name);
    Status read = read_file(fs, path, &bytes);
    if (!read.ok()) {
      std::vector<std::string> now;
      if (fs.list_dir(dir, &now).ok() && std::find(now.begin(), now.end(), name) == now.end()) continue;  // retired
      return read;
    }
    scanned += bytes.size();
    SegmentHeader header;
    if (std::string problem = decode_segment_header(bytes, &header); !problem.empty()) {
      if (last && bytes.size() <= kSegmentHeaderBytes) break;  // being created
      return Status::failure(path + ": offset 0: " + problem);
    }
    if (module_identity && header.module_identity != module_identity)
      return Status::failure(path + ": this log was written by module " + hex64(header.module_identity) +
                             ", not by this module (" + hex64(module_identity) + ")");
    uint64_t offset = kSegmentHeaderBytes;
    while (offset < bytes.size()) {
      DecodedRecord r;
      RecordCheck check = decode_record(bytes, offset, &r, header.version);
      if (check != RecordCheck::Ok) {
        if (last) break;  // the tail being written (the records up to `through` came before it)
        return Status::failure(path + ": offset " + std::to_string(offset) + ": " + describe(check));
      }
      if (previous && r.sequence != previous + 1)
        return Status::failure(path + ": offset " + std::to_string(offset) + ": sequence gap: expected " +
                               std::to_string(previous + 1) + ", found " + std::to_string(r.sequence) +
                               "; the history between them is missing");
      previous = r.sequence;
      offset += r.size;
      if (r.sequence > last_wanted) return {};
      if (r.sequence <= filter.after) continue;
      if (filter.event && r.event != *filter.event) continue;
      if (filter.since_ms && r.time_ms < filter.since_ms) continue;
      if (out->records.size() == filter.limit) {
        out->next_after = out->records.empty() ? filter.after : out->records.back().sequence;
        return {};
      }
      out->records.push_back(HistoryRecord{r.sequence, r.event, r.time_ms, std::string(r.args), std::string(r.key),
                                           std::string(r.result), r.failed});
    }
  }
  return {};
}

}  // namespace pure::host
