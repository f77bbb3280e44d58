// host/log_format.cpp — encoding and decoding of segment headers and records, file names.
// Depends on log_format.h, bytes.h, crc32c.h.
#include "host/log_format.h"

#include "host/host.h"

#include <algorithm>
#include <cstring>

#include "base/assert.h"
#include "host/bytes.h"
#include "host/crc32c.h"
#include "host/file_io.h"

namespace pure::host {

namespace {

std::optional<uint64_t> parse_numbered(std::string_view name, std::string_view prefix, std::string_view suffix) {
  if (name.size() != prefix.size() + 20 + suffix.size()) return std::nullopt;
  if (name.substr(0, prefix.size()) != prefix || name.substr(prefix.size() + 20) != suffix) return std::nullopt;
  uint64_t v = 0;
  for (char c : name.substr(prefix.size(), 20)) {
    if (c < '0' || c > '9') return std::nullopt;
    uint64_t next = v * 10 + uint64_t(c - '0');
    if (next / 10 != v) return std::nullopt;
    v = next;
  }
  return v;
}

}  // namespace

std::string segment_name(uint64_t first_sequence) { return "log-" + padded(first_sequence) + ".seg"; }
std::string checkpoint_name(uint64_t sequence) { return "checkpoint-" + padded(sequence) + ".ckpt"; }
std::string checkpoint_temp_name(uint64_t sequence) { return "checkpoint-" + padded(sequence) + ".tmp"; }
std::optional<uint64_t> parse_segment_name(std::string_view name) { return parse_numbered(name, "log-", ".seg"); }
std::optional<uint64_t> parse_checkpoint_name(std::string_view name) {
  return parse_numbered(name, "checkpoint-", ".ckpt");
}

std::string encode_segment_header(uint64_t module_identity, uint64_t first_sequence, uint32_t version) {
  std::string h(kSegmentMagic, sizeof kSegmentMagic);
  put_u32(h, version);
  put_u32(h, kSegmentHeaderBytes);
  put_u64(h, module_identity);
  put_u64(h, first_sequence);
  put_u32(h, crc32c(0, h.data(), h.size()));
  put_u32(h, 0);
  return h;
}

std::string decode_segment_header(std::string_view bytes, SegmentHeader* out) {
  if (bytes.size() < kSegmentHeaderBytes) return "incomplete segment header";
  if (std::memcmp(bytes.data(), kSegmentMagic, sizeof kSegmentMagic) != 0) return "not a Pure log segment (bad magic)";
  if (crc32c(0, bytes.data(), 32) != get_u32(bytes.data() + 32)) return "segment header checksum mismatch";
  uint32_t version = get_u32(bytes.data() + 8);
  if (version < kOldestLogVersion || version > kLogVersion)
    return "unsupported log version " + std::to_string(version) + " (this build reads versions " +
           std::to_string(kOldestLogVersion) + " to " + std::to_string(kLogVersion) + ")";
  out->version = version;
  if (get_u32(bytes.data() + 12) != kSegmentHeaderBytes) return "bad segment header size";
  out->module_identity = get_u64(bytes.data() + 16);
  out->first_sequence = get_u64(bytes.data() + 24);
  return "";
}

uint64_t record_bytes(size_t args, size_t key, size_t result, uint32_t version, bool failed) {
  uint64_t n = kRecordPrefixBytes + record_fixed_bytes(version) + args;
  if (version >= 4 && failed) return n + 4 + result;  // no key
  if (version >= 3 && key > 0) n += key + 4 + result;
  return n;
}

void encode_record(std::string& out, uint64_t sequence, uint32_t event, std::string_view args, uint64_t time_ms,
                   uint32_t version, std::string_view key, std::string_view result, bool failed) {
  PURE_ASSERT(!failed || version >= 4);  // a failed record needs a version 4 segment
  if (failed) key = {};
  if (version < 3 || (key.empty() && !failed)) result = {};
  if (version < 3) key = {};
  if (key.size() > 255) key = key.substr(0, 255);  // callers check limits::kIdempotencyKeyBytes
  // Sized first, then written in place: appending the fields a byte at a time cost more than the
  // rest of a logged event (about 600 instructions a record).
  const size_t at = out.size();
  const uint64_t total = record_bytes(args.size(), key.size(), result.size(), version, failed);
  const uint32_t length = static_cast<uint32_t>(total - kRecordPrefixBytes);
  out.resize(at + total);
  char* const start = out.data() + at;
  char* p = start;
  auto copy = [&p](std::string_view bytes) {
    if (!bytes.empty()) std::memcpy(p, bytes.data(), bytes.size());
    p += bytes.size();
  };
  store_u32(p, length);
  store_u32(p + 4, 0);  // the checksum, below
  store_u64(p + 8, sequence);
  store_u32(p + 16, event);
  p += 20;
  if (version != 1) {
    store_u64(p, time_ms);
    p += 8;
  }
  if (version >= 4) *p++ = static_cast<char>(failed ? kRecordFailed : 0);
  if (version >= 3) {
    *p++ = static_cast<char>(key.size());
    if (!key.empty() || failed) {
      copy(key);
      store_u32(p, static_cast<uint32_t>(result.size()));
      p += 4;
      copy(result);
    }
  }
  copy(args);
  PURE_ASSERT(p == start + total);
  uint32_t crc = crc32c(0, start, 4);
  crc = crc32c(crc, start + kRecordPrefixBytes, length);
  store_u32(start + 4, crc);
}

RecordCheck decode_record(std::string_view bytes, uint64_t offset, DecodedRecord* out, uint32_t version) {
  if (offset + kRecordPrefixBytes > bytes.size()) return RecordCheck::Truncated;
  const char* p = bytes.data() + offset;
  uint32_t length = get_u32(p);
  const uint32_t fixed = record_fixed_bytes(version);
  if (length < fixed || length > kMaxRecordLength) return RecordCheck::BadLength;
  if (offset + kRecordPrefixBytes + length > bytes.size()) return RecordCheck::Truncated;
  uint32_t crc = crc32c(0, p, 4);
  crc = crc32c(crc, p + kRecordPrefixBytes, length);
  if (crc != get_u32(p + 4)) return RecordCheck::BadChecksum;
  out->sequence = get_u64(p + 8);
  out->event = get_u32(p + 16);
  out->time_ms = version == 1 ? 0 : get_u64(p + 20);
  out->key = {};
  out->result = {};
  out->failed = false;
  uint32_t used = fixed;  // bytes of the length before the arguments
  if (version >= 3) {
    if (version >= 4) {
      uint8_t flags = static_cast<uint8_t>(p[28]);
      if (flags & ~kRecordFailed) return RecordCheck::BadLength;  // no such record: not ours to guess
      out->failed = flags & kRecordFailed;
    }
    uint32_t key = static_cast<uint8_t>(p[version >= 4 ? 29 : 28]);
    if (out->failed && key > 0) return RecordCheck::BadLength;
    if (key > 0 || out->failed) {
      if (uint64_t{used} + key + 4 > length) return RecordCheck::BadLength;
      out->key = std::string_view(p + kRecordPrefixBytes + used, key);
      used += key;
      uint32_t result = get_u32(p + kRecordPrefixBytes + used);
      used += 4;
      if (uint64_t{used} + result > length) return RecordCheck::BadLength;
      out->result = std::string_view(p + kRecordPrefixBytes + used, result);
      used += result;
    }
  }
  out->args = std::string_view(p + kRecordPrefixBytes + used, length - used);
  out->size = kRecordPrefixBytes + length;
  return RecordCheck::Ok;
}

const char* describe(RecordCheck check) {
  switch (check) {
    case RecordCheck::Ok: return "ok";
    case RecordCheck::Truncated: return "record runs past the end of the file";
    case RecordCheck::BadLength: return "impossible record length";
    case RecordCheck::BadChecksum: return "record checksum mismatch";
  }
  return "?";
}

void append_shipped_record(std::string& out, const ShippedRecord& record) {
  encode_record(out, record.sequence, record.event, record.args, record.time_ms, kShippedVersion, record.key,
                record.result);
}

std::string read_shipped_record(std::string_view bytes, size_t* offset, ShippedRecord* out) {
  DecodedRecord d;
  RecordCheck check = decode_record(bytes, *offset, &d, kShippedVersion);
  if (check != RecordCheck::Ok) return "offset " + std::to_string(*offset) + ": " + describe(check);
  *out = ShippedRecord{d.sequence, d.event, d.time_ms, d.key, d.result, d.args};
  *offset += d.size;
  return "";
}

Status list_data_dir(FileSystem& fs, const std::string& dir, DirListing* out) {
  std::vector<std::string> names;
  if (Status s = fs.list_dir(dir, &names); !s.ok()) return s;
  *out = DirListing{};
  for (const std::string& name : names) {
    if (auto seq = parse_segment_name(name)) out->segments.emplace_back(*seq, name);
    else if (auto ck = parse_checkpoint_name(name)) out->checkpoints.push_back(*ck);
    else if (name.rfind("version-", 0) == 0 && name.size() > 4 && name.compare(name.size() - 4, 4, ".src") == 0)
      out->versions.push_back(name);
  }
  std::sort(out->segments.begin(), out->segments.end());
  std::sort(out->checkpoints.begin(), out->checkpoints.end());
  std::sort(out->versions.begin(), out->versions.end());
  return {};
}

uint64_t DirListing::oldest() const {
  bool from_start = segments.empty() ? checkpoints.empty() : segments.front().first == 1;
  if (from_start) return 0;
  return checkpoints.empty() ? UINT64_MAX : checkpoints.front();
}

bool still_listed(FileSystem& fs, const std::string& dir, const std::string& name) {
  std::vector<std::string> names;
  if (!fs.list_dir(dir, &names).ok()) return true;
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace pure::host
