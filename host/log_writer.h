// host/log_writer.h — starting the event log of a data directory after recovery (and its
// manifest: host/manifest.h). Private to host/. Depends on host.h and file_io.h.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "host/file_io.h"
#include "host/host.h"

namespace pure::host {

struct SegmentRef {
  uint64_t first_sequence = 0;
  std::string name;         // file name inside the data directory
  uint64_t bytes = 0;       // its size (sealed segments; the one being written grows)
  uint64_t first_time = 0;  // its first record's commit time (0: unknown, or no record yet)
};

// Where recovery left the log.
struct LogStart {
  uint64_t next_sequence = 1;       // the sequence the first append gets
  std::vector<SegmentRef> segments; // the segments on disk, in order
  // The last segment can take more records: its valid bytes end at last_end and its next record
  // would be next_sequence. Otherwise a new segment named next_sequence is created.
  bool continue_last = false;
  uint64_t last_end = 0;
  uint64_t checkpoint_sequence = 0;  // the newest checkpoint recovery found (the manifest records it)
  uint64_t last_time = 0;            // the last record's commit time (0: unknown): times never go back
};

Status start_log(FileSystem& fs, const std::string& dir, uint64_t module_identity, const LogOptions& options,
                 DurableCallback on_durable, const LogStart& start, std::unique_ptr<EventLog>* out);

}  // namespace pure::host
