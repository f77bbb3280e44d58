// host/log_format.h — the bytes of log segments and the names of the files in a data directory.
// Private to host/. Depends on bytes.h and crc32c.h.
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
//   record, version 2: u32 length L | u32 crc32c | u64 sequence | u32 event | u64 commit time |
//                      L-20 argument bytes
//   record, version 1: u32 length L | u32 crc32c | u64 sequence | u32 event | L-12 argument bytes
//                      crc32c covers the length field and the L bytes after the crc field, so a
//                      damaged length is caught too. All integers little-endian.
// The commit time is the wall clock (milliseconds since the Unix epoch) when the owner appended
// the record; records appended together share it, and it never decreases along a log (a clock
// stepped back holds at the last time written). It is metadata for people (the audit trail,
// retention by age): replay never passes it to a module, so a module cannot read it and
// determinism holds. This build writes version 2 and reads both: a version 1 segment's records
// have no time (0: unknown). A segment holds one version throughout; a directory may hold both (a
// log started by an older build is continued in a new version 2 segment, never appended to).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pure::host {

inline constexpr char kSegmentMagic[8] = {'P', 'U', 'R', 'E', 'L', 'O', 'G', '1'};
inline constexpr uint32_t kLogVersion = 2;         // the version this build writes
inline constexpr uint32_t kOldestLogVersion = 1;   // the oldest it reads
inline constexpr uint32_t kSegmentHeaderBytes = 40;
inline constexpr uint32_t kRecordPrefixBytes = 8;   // length + crc
inline constexpr uint32_t kRecordFixedBytes = 20;   // sequence + event + time, counted in the length
inline constexpr uint32_t kRecordFixedBytesV1 = 12; // sequence + event (version 1)
// The fixed bytes counted in a record's length in a segment of this version.
constexpr uint32_t record_fixed_bytes(uint32_t version) { return version == 1 ? kRecordFixedBytesV1 : kRecordFixedBytes; }
inline constexpr uint32_t kMaxRecordLength = 1u << 30;

std::string segment_name(uint64_t first_sequence);
std::string checkpoint_name(uint64_t sequence);
std::string checkpoint_temp_name(uint64_t sequence);
// The number in a segment or checkpoint name; nullopt for anything else.
std::optional<uint64_t> parse_segment_name(std::string_view name);
std::optional<uint64_t> parse_checkpoint_name(std::string_view name);

std::string encode_segment_header(uint64_t module_identity, uint64_t first_sequence, uint32_t version = kLogVersion);

struct SegmentHeader {
  uint64_t module_identity = 0;
  uint64_t first_sequence = 0;
  uint32_t version = kLogVersion;  // how its records are laid out
};
// "" when bytes start with a valid header, else what is wrong with it.
std::string decode_segment_header(std::string_view bytes, SegmentHeader* out);

// Appends one record laid out for a segment of this version (version 1 has no time).
void encode_record(std::string& out, uint64_t sequence, uint32_t event, std::string_view args, uint64_t time_ms = 0,
                   uint32_t version = kLogVersion);

struct DecodedRecord {
  uint64_t sequence = 0;
  uint32_t event = 0;
  uint64_t time_ms = 0;  // commit time; 0: unknown (a version 1 segment)
  std::string_view args;
  uint64_t size = 0;  // bytes the record takes, prefix included
};
enum class RecordCheck : uint8_t { Ok, Truncated, BadLength, BadChecksum };
// Decodes the record at offset of bytes, a segment of this version.
RecordCheck decode_record(std::string_view bytes, uint64_t offset, DecodedRecord* out, uint32_t version = kLogVersion);
const char* describe(RecordCheck check);

}  // namespace pure::host
