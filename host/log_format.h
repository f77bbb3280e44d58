// host/log_format.h — the bytes of log segments and the names of the files in a data directory.
// Private to host/. Depends on bytes.h, crc32c.h and (for the listing) file_io.h.
//
// A data directory holds:
//   log-<first sequence, 20 digits>.seg   segments, in sequence order
//   checkpoint-<sequence, 20 digits>.ckpt checkpoints: recovery starts from the newest; older ones
//                                         are history, kept as long as the retention (host.h,
//                                         Retention) keeps the segments after them
//   *.tmp                                 a checkpoint being written (deleted by recovery)
//
// Segment = header, then records back to back.
//   header (40 bytes): "PURELOG1" | u32 version | u32 header bytes=40 | u64 module identity |
//                      u64 first sequence | u32 crc32c of bytes 0..31 | u32 0
//   record, version 4: u32 length L | u32 crc32c | u64 sequence | u32 event | u64 commit time |
//                      u8 flags | u8 key bytes K | K key bytes | when K > 0 or the record is
//                      failed: u32 bytes R | R bytes (the result, or a failed record's reason) |
//                      the rest of L: argument bytes. flags bit 0: failed (an audit-only record
//                      of an event that failed and changed nothing: replay skips it); the other
//                      bits are 0 (a record with one set is refused as damaged).
//   record, version 3: u32 length L | u32 crc32c | u64 sequence | u32 event | u64 commit time |
//                      u8 key bytes K | K key bytes | when K > 0: u32 result bytes R | R result
//                      bytes | the rest of L: argument bytes
//   record, version 2: u32 length L | u32 crc32c | u64 sequence | u32 event | u64 commit time |
//                      L-20 argument bytes
//   record, version 1: u32 length L | u32 crc32c | u64 sequence | u32 event | L-12 argument bytes
//                      crc32c covers the length field and the L bytes after the crc field, so a
//                      damaged length is caught too. All integers little-endian.
// The commit time is the wall clock (milliseconds since the Unix epoch) when the owner appended
// the record; records appended together share it, and it never decreases along a log (a clock
// stepped back holds at the last time written). It is metadata for people (the audit trail,
// retention by age): replay never passes it to a module, so a module cannot read it and
// determinism holds. The key (version 3) is the event request's Idempotency-Key (K = 0: none) and
// the result the event's encoded result (host.h, encode_values), logged so that a retry after a
// restart gets the original answer: like the time, replay never passes either to a module.
// A failed record (version 4, --audit-failed) takes a sequence like any record, so the audit trail
// shows where the failure fell among the events; it carries the event's arguments as sent, no key
// and, in place of a result, why it failed. Replay, as-of reads and idempotency keys skip it.
// This build writes version 4 and reads 1 to 4: a version 1 segment's records have no time (0:
// unknown), a version 1 or 2 segment's no key, a version 1 to 3 segment's no failed records. A
// segment holds one version throughout; a directory may hold several (a log started by an older
// build is continued in a new version 4 segment, never appended to). A build that reads only up
// to version 3 refuses a version 4 segment by its header ("unsupported log version 4"), before
// it could mistake a failed record for an event to replay.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/host.h"  // Status, FileSystem (declared)

namespace pure::host {

inline constexpr char kSegmentMagic[8] = {'P', 'U', 'R', 'E', 'L', 'O', 'G', '1'};
inline constexpr uint32_t kLogVersion = 4;         // the version this build writes
inline constexpr uint32_t kOldestLogVersion = 1;   // the oldest it reads
inline constexpr uint32_t kShippedVersion = 3;     // the layout of records a cluster ships (host.h ShippedRecord)
inline constexpr uint32_t kSegmentHeaderBytes = 40;
inline constexpr uint32_t kRecordPrefixBytes = 8;   // length + crc
inline constexpr uint32_t kRecordFixedBytes = 22;   // sequence + event + time + flags + key length, counted in the length
inline constexpr uint32_t kRecordFixedBytesV3 = 21; // sequence + event + time + key length (version 3)
inline constexpr uint32_t kRecordFixedBytesV2 = 20; // sequence + event + time (version 2)
inline constexpr uint32_t kRecordFixedBytesV1 = 12; // sequence + event (version 1)
// The fixed bytes counted in a record's length in a segment of this version (the least a record
// of it can take: version 3's key and result are not fixed).
constexpr uint32_t record_fixed_bytes(uint32_t version) {
  return version == 1   ? kRecordFixedBytesV1
         : version == 2 ? kRecordFixedBytesV2
         : version == 3 ? kRecordFixedBytesV3
                        : kRecordFixedBytes;
}
inline constexpr uint32_t kMaxRecordLength = 1u << 30;
inline constexpr uint8_t kRecordFailed = 1;  // version 4 flags: an audit-only record of a failed event

std::string segment_name(uint64_t first_sequence);
std::string checkpoint_name(uint64_t sequence);
std::string checkpoint_temp_name(uint64_t sequence);
// The number in a segment or checkpoint name; nullopt for anything else.
std::optional<uint64_t> parse_segment_name(std::string_view name);
std::optional<uint64_t> parse_checkpoint_name(std::string_view name);

// The data files of a directory, each kind in order: what as-of reads and backups start from.
struct DirListing {
  std::vector<std::pair<uint64_t, std::string>> segments;  // by first sequence
  std::vector<uint64_t> checkpoints;                       // ascending
  std::vector<std::string> versions;                       // version-N.src, by name
  // The oldest sequence whose state the directory holds: its oldest checkpoint, or 0 when the
  // log starts at 1 (or the directory is empty: the empty state); UINT64_MAX when neither.
  uint64_t oldest() const;
};
Status list_data_dir(FileSystem& fs, const std::string& dir, DirListing* out);
// Whether name is still in dir (true when dir cannot be listed: the caller's own error follows).
bool still_listed(FileSystem& fs, const std::string& dir, const std::string& name);

std::string encode_segment_header(uint64_t module_identity, uint64_t first_sequence, uint32_t version = kLogVersion);

struct SegmentHeader {
  uint64_t module_identity = 0;
  uint64_t first_sequence = 0;
  uint32_t version = kLogVersion;  // how its records are laid out
};
// "" when bytes start with a valid header, else what is wrong with it.
std::string decode_segment_header(std::string_view bytes, SegmentHeader* out);

// Appends one record laid out for a segment of this version (version 1 has no time, versions 1
// and 2 no key: key and result must be empty then). key: at most limits::kIdempotencyKeyBytes;
// result is logged only with a key. failed (version 4 only): an audit-only record whose result is
// the reason the event failed, with no key.
void encode_record(std::string& out, uint64_t sequence, uint32_t event, std::string_view args, uint64_t time_ms = 0,
                   uint32_t version = kLogVersion, std::string_view key = {}, std::string_view result = {},
                   bool failed = false);
// The bytes of the record encode_record writes (prefix included).
uint64_t record_bytes(size_t args, size_t key, size_t result, uint32_t version = kLogVersion, bool failed = false);

struct DecodedRecord {
  uint64_t sequence = 0;
  uint32_t event = 0;
  uint64_t time_ms = 0;  // commit time; 0: unknown (a version 1 segment)
  std::string_view key;     // Idempotency-Key ("": none, and always before version 3)
  std::string_view result;  // with a key: the event's encoded result; failed: why it failed
  std::string_view args;
  uint64_t size = 0;  // bytes the record takes, prefix included
  bool failed = false;  // an audit-only record of a failed event (version 4): replay skips it
};
enum class RecordCheck : uint8_t { Ok, Truncated, BadLength, BadChecksum };
// Decodes the record at offset of bytes, a segment of this version.
RecordCheck decode_record(std::string_view bytes, uint64_t offset, DecodedRecord* out, uint32_t version = kLogVersion);
const char* describe(RecordCheck check);

}  // namespace pure::host
