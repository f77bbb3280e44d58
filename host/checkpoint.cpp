// host/checkpoint.cpp — checkpoint files: every row of every stored list of a snapshot, in
// checksummed blocks, closed by a footer naming the last sequence number included.
// Depends on host.h, file_io.h, log_format.h, bytes.h, crc32c.h and runtime/store.h.
//
// File = blocks, then a 32-byte footer.
//   block:  u32 payload length P | u32 crc32c of the length field and the payload | P bytes
//           payload byte 0 is the kind:
//     1 header: "PURECKPT" | u32 version=1 | u64 module identity | u64 sequence | u32 lists |
//               per list: u16 name bytes, name, u8 is_sequence, u8 key columns, their types,
//               u16 field columns, their types, u64 row count
//     2 rows:   u32 list index | u32 rows | rows: per cell, Int/Num/Bool as u64, Text as
//               u32 byte count and the bytes (sequences store the fields only; the position is
//               the order). A list's rows come in key order, in one or more blocks.
//   footer: "PUREEND1" | u64 sequence | u64 block count | u32 crc32c of bytes 0..23 | u32 0
// Column types: 0 Int, 1 Num, 2 Bool, 3 Text.
#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

#include "host/bytes.h"
#include "host/crc32c.h"
#include "host/file_io.h"
#include "host/log_format.h"

namespace pure::host {

namespace {

constexpr char kCheckpointMagic[8] = {'P', 'U', 'R', 'E', 'C', 'K', 'P', 'T'};
constexpr char kFooterMagic[8] = {'P', 'U', 'R', 'E', 'E', 'N', 'D', '1'};
constexpr uint32_t kCheckpointVersion = 1;
constexpr uint32_t kFooterBytes = 32;
constexpr size_t kBlockTarget = 64 * 1024;       // rows blocks close once past this
constexpr size_t kWriteBuffer = 1024 * 1024;     // bytes gathered per append
constexpr uint32_t kMaxBlock = 1u << 31;
constexpr uint8_t kHeaderBlock = 1;
constexpr uint8_t kRowsBlock = 2;

rt::ColType column_type(const rt::ListSchema& s, uint32_t c) {
  return c < s.key_width() ? s.key[c] : s.fields[c - s.key_width()];
}

void put_schema(std::string& out, const rt::ListSchema& s) {
  put_u16(out, static_cast<uint16_t>(s.name.size()));
  out += s.name;
  put_u8(out, s.is_sequence ? 1 : 0);
  put_u8(out, static_cast<uint8_t>(s.key.size()));
  for (rt::ColType t : s.key) put_u8(out, static_cast<uint8_t>(t));
  put_u16(out, static_cast<uint16_t>(s.fields.size()));
  for (rt::ColType t : s.fields) put_u8(out, static_cast<uint8_t>(t));
}

// Appends the checkpoint's bytes to a file in large writes.
class BlockWriter {
 public:
  // keep_free: bytes of the disk the checkpoint must leave to the event log (0: no check).
  BlockWriter(File& file, FileSystem& fs, const std::string& dir, const std::string& path, uint64_t keep_free)
      : file_(file), fs_(fs), dir_(dir), path_(path), keep_free_(keep_free) {}
  Status add(const std::string& payload) {
    uint32_t length = static_cast<uint32_t>(payload.size());
    size_t at = buffer_.size();
    put_u32(buffer_, length);
    put_u32(buffer_, 0);
    buffer_ += payload;
    uint32_t crc = crc32c(0, buffer_.data() + at, 4);
    crc = crc32c(crc, payload.data(), payload.size());
    store_u32(buffer_.data() + at + 4, crc);
    ++blocks_;
    return buffer_.size() >= kWriteBuffer ? flush() : Status{};
  }
  Status add_raw(const std::string& bytes) {
    buffer_ += bytes;
    return flush();
  }
  Status flush() {
    if (buffer_.empty()) return {};
    if (keep_free_) {
      // A checkpoint never takes the room the log needs: on a disk short of space it stops here
      // (and its file is deleted), where a write that ran out of space would fail the log's next write.
      uint64_t free = 0;
      if (Status s = fs_.free_bytes(dir_, &free); !s.ok()) return s;
      if (free < keep_free_ || free - keep_free_ < buffer_.size())
        return Status::failure(path_ + ": checkpoint stopped: " + std::to_string(free) +
                               " bytes free on the disk, and " + std::to_string(keep_free_) +
                               " are kept for the event log");
    }
    Status s = file_.write_at(written_, buffer_.data(), buffer_.size());
    written_ += buffer_.size();
    buffer_.clear();
    return s;
  }
  uint64_t blocks() const { return blocks_; }
  uint64_t written() const { return written_; }

 private:
  File& file_;
  FileSystem& fs_;
  const std::string& dir_;
  const std::string& path_;
  const uint64_t keep_free_;
  std::string buffer_;
  uint64_t blocks_ = 0;
  uint64_t written_ = 0;
};

// Bounds-checked reading of one block's payload.
struct Reader {
  const char* p;
  const char* end;
  bool ok = true;
  bool need(size_t n) {
    if (!ok || static_cast<size_t>(end - p) < n) ok = false;
    return ok;
  }
  uint8_t u8() { return need(1) ? static_cast<uint8_t>(*p++) : 0; }
  uint16_t u16() {
    if (!need(2)) return 0;
    uint16_t v = get_u16(p);
    p += 2;
    return v;
  }
  uint32_t u32() {
    if (!need(4)) return 0;
    uint32_t v = get_u32(p);
    p += 4;
    return v;
  }
  uint64_t u64() {
    if (!need(8)) return 0;
    uint64_t v = get_u64(p);
    p += 8;
    return v;
  }
  std::string_view bytes(size_t n) {
    if (!need(n)) return {};
    std::string_view v(p, n);
    p += n;
    return v;
  }
};

bool read_schema(Reader& r, rt::ListSchema* s, uint64_t* rows) {
  s->name = std::string(r.bytes(r.u16()));
  s->is_sequence = r.u8() != 0;
  uint8_t keys = r.u8();
  for (uint8_t i = 0; i < keys && r.ok; ++i) s->key.push_back(static_cast<rt::ColType>(r.u8()));
  uint16_t fields = r.u16();
  for (uint16_t i = 0; i < fields && r.ok; ++i) s->fields.push_back(static_cast<rt::ColType>(r.u8()));
  *rows = r.u64();
  for (rt::ColType t : s->key) r.ok = r.ok && static_cast<uint8_t>(t) <= 3;
  for (rt::ColType t : s->fields) r.ok = r.ok && static_cast<uint8_t>(t) <= 3;
  return r.ok;
}

bool same_schema(const rt::ListSchema& a, const rt::ListSchema& b) {
  return a.name == b.name && a.is_sequence == b.is_sequence && a.key == b.key && a.fields == b.fields;
}

std::string at(const std::string& path, uint64_t offset) { return path + ": offset " + std::to_string(offset) + ": "; }

}  // namespace

namespace {

// The checkpoint's bytes, written to file and synced.
Status write_blocks(File& file, BlockWriter& out, uint64_t module_identity, const rt::Snapshot& snapshot,
                    uint64_t through, CheckpointInfo* info) {

  std::string payload;
  put_u8(payload, kHeaderBlock);
  payload.append(kCheckpointMagic, sizeof kCheckpointMagic);
  put_u32(payload, kCheckpointVersion);
  put_u64(payload, module_identity);
  put_u64(payload, through);
  put_u32(payload, static_cast<uint32_t>(snapshot.list_count()));
  for (size_t i = 0; i < snapshot.list_count(); ++i) {
    put_schema(payload, snapshot.list(i).schema());
    put_u64(payload, static_cast<uint64_t>(snapshot.list(i).count()));
  }
  if (Status s = out.add(payload); !s.ok()) return s;

  uint64_t rows = 0;
  uint64_t state_bytes = 0;
  for (size_t i = 0; i < snapshot.list_count(); ++i) {
    const rt::ListReader& list = snapshot.list(i);
    const rt::ListSchema& schema = list.schema();
    uint32_t width = schema.row_width();
    uint32_t in_block = 0;
    auto start_block = [&] {
      payload.clear();
      put_u8(payload, kRowsBlock);
      put_u32(payload, static_cast<uint32_t>(i));
      put_u32(payload, 0);  // row count, filled in when the block closes
      in_block = 0;
    };
    auto close_block = [&]() -> Status {
      if (in_block == 0) return {};
      store_u32(payload.data() + 5, in_block);
      return out.add(payload);
    };
    start_block();
    // Each row's bytes go in with one resize and plain stores: the cells' little-endian u64s and
    // the texts' u32 lengths and bytes, laid out as put_u64 / put_u32 would (byte by byte, the
    // checkpoint thread spent about a tenth of pure-serve's processor time under TPC-C).
    std::vector<uint32_t> texts;  // the row's text columns
    for (uint32_t c = 0; c < width; ++c)
      if (column_type(schema, c) == rt::ColType::Text) texts.push_back(c);
    // Rows come a leaf's run at a time (side by side, valid while the snapshot is held), so the
    // texts a few rows ahead can be asked for while this row is encoded: each text is its own
    // allocation, and waiting for its header was most of the checkpoint's time.
    constexpr size_t kAhead = 4;
    auto prefetch_texts = [&](const rt::Cell* row) {
      for (uint32_t c : texts) __builtin_prefetch(reinterpret_cast<const void*>(row[c]));
    };
    const rt::Cell* run = nullptr;
    for (auto cursor = list.scan(); size_t n = cursor->take_run(&run, SIZE_MAX);) {
      if (!texts.empty())
        for (size_t j = 0; j < n && j < kAhead; ++j) prefetch_texts(run + j * width);
      for (size_t j = 0; j < n; ++j) {
        const rt::Cell* row = run + j * width;
        if (!texts.empty() && j + kAhead < n) prefetch_texts(row + kAhead * width);
        size_t row_bytes = 8ull * (width - texts.size());
        for (uint32_t c : texts) row_bytes += 4 + reinterpret_cast<const rt::Text*>(row[c])->len;
        size_t at = payload.size();
        payload.resize(at + row_bytes);
        char* p = payload.data() + at;
        for (uint32_t c = 0, t = 0; c < width; ++c) {
          if (t < texts.size() && texts[t] == c) {
            ++t;
            auto* text = reinterpret_cast<const rt::Text*>(row[c]);
            store_u32(p, text->len);
            std::memcpy(p + 4, text->bytes, text->len);
            p += 4 + text->len;
            state_bytes += text->len;
          } else {
            store_u64(p, row[c]);
            p += 8;
          }
        }
        state_bytes += 8ull * width;
        ++in_block;
        ++rows;
        if (payload.size() >= kBlockTarget) {
          if (Status s = close_block(); !s.ok()) return s;
          start_block();
        }
      }
    }
    if (Status s = close_block(); !s.ok()) return s;
  }

  std::string footer(kFooterMagic, sizeof kFooterMagic);
  put_u64(footer, through);
  put_u64(footer, out.blocks());
  put_u32(footer, crc32c(0, footer.data(), footer.size()));
  put_u32(footer, 0);
  if (Status s = out.add_raw(footer); !s.ok()) return s;
  if (Status s = file.datasync(); !s.ok()) return s;
  info->bytes = out.written();
  info->rows = rows;
  info->state_bytes = state_bytes;
  return {};
}

}  // namespace

Status write_checkpoint(FileSystem& fs, const std::string& dir, uint64_t module_identity, const rt::Snapshot& snapshot,
                        uint64_t through, EventLog* log, CheckpointInfo* info, uint64_t keep_free_bytes) {
  auto started = std::chrono::steady_clock::now();
  std::string temp = join_path(dir, checkpoint_temp_name(through));
  std::string final_path = join_path(dir, checkpoint_name(through));
  CheckpointInfo written;
  std::unique_ptr<File> file;
  Status s = fs.open(temp, OpenMode::Create, &file);
  if (s.ok()) {
    BlockWriter out(*file, fs, dir, temp, keep_free_bytes);
    s = write_blocks(*file, out, module_identity, snapshot, through, &written);
    file.reset();
  }
  if (s.ok()) s = fs.rename(temp, final_path);
  if (!s.ok()) {
    // A failed checkpoint leaves nothing behind: its temporary file would hold disk space the log
    // needs until the next start. (Recovery deletes any that a crash left.)
    (void)fs.unlink(temp);  // best effort: the checkpoint's own failure is what is reported
    return s;
  }
  if (Status s = fs.sync_dir(dir); !s.ok()) return s;
  // The manifest names it before anything older goes: from then on recovery needs this one.
  if (log)
    if (Status s = log->record_checkpoint(through); !s.ok()) return s;

  // The new checkpoint is durable: the history it covers is kept as the log's retention says.
  if (log) {
    if (Status s = log->retire_history(through); !s.ok()) return s;
  } else {
    std::vector<std::string> names;
    if (Status s = fs.list_dir(dir, &names); !s.ok()) return s;
    bool removed = false;
    for (const std::string& name : names) {
      auto seq = parse_checkpoint_name(name);
      if (seq && *seq < through) {
        if (Status s = fs.unlink(join_path(dir, name)); !s.ok()) return s;
        removed = true;
      }
    }
    if (removed)
      if (Status s = fs.sync_dir(dir); !s.ok()) return s;
  }
  if (info) {
    *info = written;
    info->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }
  return {};
}

Status read_checkpoint(FileSystem& fs, const std::string& path, uint64_t module_identity,
                       const std::vector<rt::ListSchema>& schemas, std::unique_ptr<rt::Store>* store_out,
                       uint64_t* through) {
  std::unique_ptr<File> file;
  if (Status s = fs.open(path, OpenMode::Read, &file); !s.ok()) return s;
  uint64_t size = 0;
  if (Status s = file->size(&size); !s.ok()) return s;
  if (size < kFooterBytes) return Status::failure(at(path, 0) + "checkpoint too short for its footer");
  char footer[kFooterBytes];
  size_t got = 0;
  uint64_t footer_at = size - kFooterBytes;
  if (Status s = file->read_at(footer_at, footer, kFooterBytes, &got); !s.ok()) return s;
  if (got != kFooterBytes || std::memcmp(footer, kFooterMagic, 8) != 0 || crc32c(0, footer, 24) != get_u32(footer + 24))
    return Status::failure(at(path, footer_at) + "checkpoint footer missing or damaged");
  uint64_t footer_sequence = get_u64(footer + 8);
  uint64_t footer_blocks = get_u64(footer + 16);

  std::unique_ptr<rt::Store> store;
  std::vector<uint64_t> expected_rows;
  std::vector<uint64_t> seen_rows;
  uint64_t blocks = 0;
  uint64_t offset = 0;
  std::string payload;
  while (offset < footer_at) {
    char prefix[8];
    if (footer_at - offset < 8) return Status::failure(at(path, offset) + "checkpoint block header cut short");
    if (Status s = file->read_at(offset, prefix, 8, &got); !s.ok()) return s;
    uint32_t length = get_u32(prefix);
    if (length == 0 || length > kMaxBlock || length > footer_at - offset - 8)
      return Status::failure(at(path, offset) + "checkpoint block length " + std::to_string(length) + " is impossible");
    payload.resize(length);
    if (Status s = file->read_at(offset + 8, payload.data(), length, &got); !s.ok()) return s;
    uint32_t crc = crc32c(crc32c(0, prefix, 4), payload.data(), length);
    if (got != length || crc != get_u32(prefix + 4))
      return Status::failure(at(path, offset) + "checkpoint block checksum mismatch");
    Reader r{payload.data(), payload.data() + payload.size()};
    uint8_t kind = r.u8();
    if (blocks == 0) {
      if (kind != kHeaderBlock || std::memcmp(r.bytes(8).data(), kCheckpointMagic, 8) != 0)
        return Status::failure(at(path, offset) + "not a Pure checkpoint (bad magic)");
      uint32_t version = r.u32();
      if (version != kCheckpointVersion)
        return Status::failure(at(path, offset) + "unsupported checkpoint version " + std::to_string(version));
      uint64_t module = r.u64();
      if (module != module_identity)
        return Status::failure(path + ": checkpoint was written by module " + hex64(module) + ", not by this module (" +
                               hex64(module_identity) + ")");
      uint64_t sequence = r.u64();
      if (sequence != footer_sequence)
        return Status::failure(at(path, offset) + "header sequence " + std::to_string(sequence) +
                               " differs from the footer's " + std::to_string(footer_sequence));
      uint32_t lists = r.u32();
      if (!r.ok || lists != schemas.size())
        return Status::failure(at(path, offset) + "checkpoint has " + std::to_string(lists) +
                               " stored lists, the module has " + std::to_string(schemas.size()));
      for (uint32_t i = 0; i < lists; ++i) {
        rt::ListSchema s;
        uint64_t rows = 0;
        if (!read_schema(r, &s, &rows)) return Status::failure(at(path, offset) + "malformed checkpoint header");
        if (!same_schema(s, schemas[i]))
          return Status::failure(at(path, offset) + "stored list " + std::to_string(i) + " ('" + s.name +
                                 "') differs from the module's ('" + schemas[i].name + "')");
        expected_rows.push_back(rows);
      }
      seen_rows.assign(lists, 0);
      store = rt::make_store(schemas);
    } else {
      uint32_t index = r.u32();
      uint32_t count = r.u32();
      if (kind != kRowsBlock || !r.ok || index >= schemas.size())
        return Status::failure(at(path, offset) + "malformed checkpoint block");
      const rt::ListSchema& schema = schemas[index];
      uint32_t width = schema.row_width();
      std::vector<rt::Cell> row(width);
      std::vector<rt::Text*> texts;
      store->begin();
      for (uint32_t n = 0; n < count && r.ok; ++n) {
        for (uint32_t c = 0; c < width && r.ok; ++c) {
          if (column_type(schema, c) == rt::ColType::Text) {
            uint32_t len = r.u32();
            std::string_view bytes = r.bytes(len);
            if (!r.ok) break;
            rt::Text* t = rt::text_new(bytes);
            texts.push_back(t);
            row[c] = reinterpret_cast<rt::Cell>(t);
          } else {
            row[c] = r.u64();
          }
        }
        if (!r.ok) break;
        rt::ListWriter& list = store->list(index);
        if (schema.is_sequence) list.append(row.data());
        else list.put(row.data());
        for (rt::Text* t : texts) rt::text_release(t);
        texts.clear();
      }
      for (rt::Text* t : texts) rt::text_release(t);
      store->commit();
      if (!r.ok || r.p != r.end) return Status::failure(at(path, offset) + "malformed checkpoint rows block");
      seen_rows[index] += count;
    }
    ++blocks;
    offset += 8 + length;
  }
  if (blocks == 0) return Status::failure(at(path, 0) + "checkpoint has no header block");
  if (blocks != footer_blocks)
    return Status::failure(at(path, footer_at) + "checkpoint has " + std::to_string(blocks) + " blocks, its footer says " +
                           std::to_string(footer_blocks));
  for (size_t i = 0; i < expected_rows.size(); ++i)
    if (seen_rows[i] != expected_rows[i] || static_cast<uint64_t>(store->list(i).count()) != expected_rows[i])
      return Status::failure(at(path, footer_at) + "stored list '" + schemas[i].name + "' has " +
                             std::to_string(seen_rows[i]) + " rows, the header says " + std::to_string(expected_rows[i]));
  *store_out = std::move(store);
  *through = footer_sequence;
  return {};
}

}  // namespace pure::host
