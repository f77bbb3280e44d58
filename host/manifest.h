// host/manifest.h — DIR/manifest: what recovery must find in a data directory, so that a deleted
// segment or checkpoint is a refusal naming the file, never a start on older state. Private to
// host/. Depends on host.h and file_io.h.
//
// Manifest (56 bytes, version 1; docs/durability.md, "Manifest"):
//    0  "PUREMANI"
//    8  u32 version = 1
//   12  u32 bytes = 56           the file's size (later versions may grow it)
//   16  u64 module identity
//   24  u64 checkpoint C         a checkpoint-<S>.ckpt with S >= C must exist (0: none is needed)
//   32  u64 newest segment F     log-<F>.seg must exist (0: none is needed)
//   40  u64 durable D            events 1..D were on disk: recovery must reach at least D
//   48  u32 crc32c of bytes 0..47
//   52  u32 0
// It is rewritten whole (temporary file, fdatasync, rename, directory fsync) when a segment is
// started (F = its first sequence, D >= F - 1: the segments before it are synced), when a
// checkpoint is in place (C, and D >= C) before anything older is deleted, and when a log starts
// after recovery (D = what recovery found, its last segment synced first). A crash between any
// two steps leaves the old manifest or the new one, and each is true of the files then on disk.
#pragma once
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "host/file_io.h"
#include "host/host.h"

namespace pure::host {

inline constexpr char kManifestName[] = "manifest";
inline constexpr char kManifestTempName[] = "manifest.tmp";
inline constexpr uint32_t kManifestVersion = 1;
inline constexpr uint32_t kManifestBytes = 56;

struct ManifestState {
  uint64_t module_identity = 0;
  uint64_t checkpoint = 0;      // C
  uint64_t newest_segment = 0;  // F
  uint64_t durable = 0;         // D
};

std::string encode_manifest(const ManifestState& state);
// "" when bytes are a manifest this version reads, else what is wrong with them.
std::string decode_manifest(std::string_view bytes, ManifestState* out);

// Reads DIR/manifest: *found is false (and ok) when there is none.
Status read_manifest(FileSystem& fs, const std::string& dir, bool* found, ManifestState* out);

// The manifest of one open data directory: the log (segment rolls, its start) and checkpoints
// update it from their threads; one write at a time, each of the whole current state.
class ManifestWriter {
 public:
  ManifestWriter(FileSystem& fs, std::string dir, ManifestState state) : fs_(fs), dir_(std::move(dir)), state_(state) {}
  // Writes the state as it is (the start of a log).
  Status write();
  // Segment F was created and synced, with every segment before it.
  Status segment_started(uint64_t first_sequence);
  // checkpoint-<sequence>.ckpt is in place (renamed, directory synced).
  Status checkpoint_written(uint64_t sequence);
  ManifestState state() const;

 private:
  Status write_locked();

  FileSystem& fs_;
  const std::string dir_;
  mutable std::mutex mutex_;
  ManifestState state_;
};

}  // namespace pure::host
