// host/install.cpp — install_checkpoint (host.h): a checkpoint made by another node (cluster/: a
// new or wiped replica catching up) becomes a data directory's state. The bytes are checked whole
// (read_checkpoint: every block's crc32c, the footer, the module identity and the stored lists)
// before the file takes its final name, so a torn or damaged transfer is never installed.
// Depends on host.h, file_io.h, log_format.h, manifest.h.
#include <algorithm>

#include "host/crc32c.h"
#include "host/file_io.h"
#include "host/host.h"
#include "host/log_format.h"
#include "host/manifest.h"

namespace pure::host {

namespace {
constexpr char kInstallTemp[] = "checkpoint-install.tmp";  // recovery deletes it if a crash leaves it
}

Status install_checkpoint(FileSystem& fs, const std::string& dir, uint64_t module_identity,
                          const std::vector<rt::ListSchema>& schemas, std::string_view bytes, uint64_t* through) {
  const std::string temp = join_path(dir, kInstallTemp);
  auto fail = [&](Status s) {
    (void)fs.unlink(temp);  // best effort: the reason reported is the first failure
    return s;
  };
  std::unique_ptr<File> file;
  if (Status s = fs.open(temp, OpenMode::Create, &file); !s.ok()) return s;
  if (Status s = file->append(bytes.data(), bytes.size()); !s.ok()) return fail(s);
  if (Status s = file->datasync(); !s.ok()) return fail(s);
  file.reset();
  // Checked as recovery will read it: a checkpoint that does not read back is not installed.
  std::unique_ptr<rt::Store> store;
  uint64_t sequence = 0;
  if (Status s = read_checkpoint(fs, temp, module_identity, schemas, &store, &sequence); !s.ok())
    return fail(Status::failure("the received checkpoint is damaged or not this module's, not installed: " + s.error));
  store.reset();
  DirListing listing;
  if (Status s = list_data_dir(fs, dir, &listing); !s.ok()) return fail(s);
  uint64_t last_local = listing.checkpoints.empty() ? 0 : listing.checkpoints.back();
  for (const auto& seg : listing.segments) last_local = std::max(last_local, seg.first);
  if (last_local > sequence)
    return fail(Status::failure(dir + ": holds state past sequence " + std::to_string(sequence) +
                                "; a checkpoint older than the directory is not installed"));
  if (Status s = fs.rename(temp, join_path(dir, checkpoint_name(sequence))); !s.ok()) return fail(s);
  if (Status s = fs.sync_dir(dir); !s.ok()) return s;
  // The manifest names it (and no segment: the log starts after it) before anything older goes.
  bool found = false;
  ManifestState state;
  if (Status s = read_manifest(fs, dir, &found, &state); !s.ok()) return s;
  if (!found) state.module_identity = module_identity;
  state.checkpoint = sequence;
  state.newest_segment = 0;
  state.durable = sequence;
  ManifestWriter manifest(fs, dir, state);
  if (Status s = manifest.write(); !s.ok()) return s;
  // The directory's older state: a prefix of what the checkpoint holds, with a gap after it.
  bool removed = false;
  for (const auto& seg : listing.segments) {
    if (Status s = fs.unlink(join_path(dir, seg.second)); !s.ok()) return s;
    removed = true;
  }
  for (uint64_t c : listing.checkpoints) {
    if (c == sequence) continue;
    if (Status s = fs.unlink(join_path(dir, checkpoint_name(c))); !s.ok()) return s;
    removed = true;
  }
  if (removed)
    if (Status s = fs.sync_dir(dir); !s.ok()) return s;
  *through = sequence;
  return {};
}

std::string checkpoint_path(const std::string& dir, uint64_t sequence) {
  return join_path(dir, checkpoint_name(sequence));
}

Status read_checkpoint_bytes(FileSystem& fs, const std::string& path, std::string* bytes) {
  return read_file(fs, path, bytes);
}

uint32_t transfer_checksum(std::string_view bytes) { return crc32c(0, bytes.data(), bytes.size()); }

}  // namespace pure::host
