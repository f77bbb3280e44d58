// host/manifest.cpp — the manifest's bytes, reading it, and rewriting it whole (see manifest.h).
// Depends on manifest.h, bytes.h, crc32c.h, file_io.h.
#include "host/manifest.h"

#include <algorithm>
#include <cstring>

#include "base/assert.h"
#include "host/bytes.h"
#include "host/crc32c.h"

namespace pure::host {

namespace {

constexpr char kManifestMagic[8] = {'P', 'U', 'R', 'E', 'M', 'A', 'N', 'I'};

}  // namespace

std::string encode_manifest(const ManifestState& state) {
  std::string m(kManifestMagic, sizeof kManifestMagic);
  put_u32(m, kManifestVersion);
  put_u32(m, kManifestBytes);
  put_u64(m, state.module_identity);
  put_u64(m, state.checkpoint);
  put_u64(m, state.newest_segment);
  put_u64(m, state.durable);
  put_u32(m, crc32c(0, m.data(), m.size()));
  put_u32(m, 0);
  PURE_ASSERT(m.size() == kManifestBytes);
  return m;
}

std::string decode_manifest(std::string_view bytes, ManifestState* out) {
  if (bytes.size() < 16) return "manifest too short (" + std::to_string(bytes.size()) + " bytes)";
  if (std::memcmp(bytes.data(), kManifestMagic, sizeof kManifestMagic) != 0) return "not a Pure manifest (bad magic)";
  uint32_t version = get_u32(bytes.data() + 8);
  if (version != kManifestVersion)
    return "unsupported manifest version " + std::to_string(version) + " (this build reads version " +
           std::to_string(kManifestVersion) + ")";
  if (get_u32(bytes.data() + 12) != kManifestBytes || bytes.size() != kManifestBytes)
    return "manifest size " + std::to_string(bytes.size()) + " is not " + std::to_string(kManifestBytes);
  if (crc32c(0, bytes.data(), 48) != get_u32(bytes.data() + 48)) return "manifest checksum mismatch";
  out->module_identity = get_u64(bytes.data() + 16);
  out->checkpoint = get_u64(bytes.data() + 24);
  out->newest_segment = get_u64(bytes.data() + 32);
  out->durable = get_u64(bytes.data() + 40);
  return "";
}

Status read_manifest(FileSystem& fs, const std::string& dir, bool* found, ManifestState* out) {
  *found = false;
  std::vector<std::string> names;
  if (Status s = fs.list_dir(dir, &names); !s.ok()) return s;
  if (std::find(names.begin(), names.end(), kManifestName) == names.end()) return {};
  std::string path = join_path(dir, kManifestName);
  std::string bytes;
  if (Status s = read_file(fs, path, &bytes); !s.ok()) return s;
  if (std::string problem = decode_manifest(bytes, out); !problem.empty())
    return Status::failure(path + ": offset 0: " + problem);
  *found = true;
  return {};
}

Status ManifestWriter::write() {
  std::lock_guard<std::mutex> lock(mutex_);
  return write_locked();
}

Status ManifestWriter::segment_started(uint64_t first_sequence) {
  std::lock_guard<std::mutex> lock(mutex_);
  PURE_ASSERT(first_sequence >= state_.newest_segment);
  state_.newest_segment = first_sequence;
  state_.durable = std::max(state_.durable, first_sequence - 1);
  return write_locked();
}

Status ManifestWriter::checkpoint_written(uint64_t sequence) {
  std::lock_guard<std::mutex> lock(mutex_);
  state_.checkpoint = std::max(state_.checkpoint, sequence);
  state_.durable = std::max(state_.durable, sequence);
  return write_locked();
}

ManifestState ManifestWriter::state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return state_;
}

Status ManifestWriter::write_locked() {
  std::string bytes = encode_manifest(state_);
  std::string temp = join_path(dir_, kManifestTempName);
  std::unique_ptr<File> file;
  if (Status s = fs_.open(temp, OpenMode::Create, &file); !s.ok()) return s;
  if (Status s = file->write_at(0, bytes.data(), bytes.size()); !s.ok()) return s;
  if (Status s = file->datasync(); !s.ok()) return s;
  file.reset();
  if (Status s = fs_.rename(temp, join_path(dir_, kManifestName)); !s.ok()) return s;
  return fs_.sync_dir(dir_);
}

}  // namespace pure::host
