// host/file_fault.cpp — the fault-injecting in-memory FileSystem (see file_fault.h).
// Depends on file_fault.h only.
#include "host/file_fault.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <vector>

namespace pure::host {

namespace {

std::string parent_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

std::string name_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

Status injected(const std::string& path, const char* what) {
  return Status::failure(path + ": " + what + ": injected fault");
}

Status stopped_error(const std::string& path) { return Status::failure(path + ": machine stopped (simulated crash)"); }

bool within(const std::string& path, const std::string& dir) {
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/');
}

// Renames every key at or under directory `from` to the same place under `to` (swap: and the keys
// under `to` to `from`).
template <class Map>
void move_keys(Map& map, const std::string& from, const std::string& to, bool swap) {
  Map moved;
  for (auto it = map.begin(); it != map.end();) {
    if (within(it->first, from)) {
      moved.emplace(to + it->first.substr(from.size()), it->second);
      it = map.erase(it);
    } else if (swap && within(it->first, to)) {
      moved.emplace(from + it->first.substr(to.size()), it->second);
      it = map.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& [k, v] : moved) map[k] = v;
}

}  // namespace

class FaultFile final : public File {
 public:
  FaultFile(FaultFileSystem* fs, std::shared_ptr<FaultFileSystem::Node> node, std::string path, bool writable)
      : fs_(fs), node_(std::move(node)), path_(std::move(path)), writable_(writable) {}

  Status append(const void* data, size_t n) override {
    std::lock_guard<std::mutex> lock(fs_->mutex_);
    return write_locked(node_->data.size(), data, n);
  }

  Status write_at(uint64_t offset, const void* data, size_t n) override {
    std::lock_guard<std::mutex> lock(fs_->mutex_);
    return write_locked(offset, data, n);
  }

  Status read_at(uint64_t offset, void* data, size_t n, size_t* got) override {
    std::lock_guard<std::mutex> lock(fs_->mutex_);
    const std::string& d = node_->data;
    size_t take = offset >= d.size() ? 0 : std::min<size_t>(n, d.size() - offset);
    if (take) std::memcpy(data, d.data() + offset, take);
    *got = take;
    return {};
  }

  Status size(uint64_t* out) override {
    std::lock_guard<std::mutex> lock(fs_->mutex_);
    *out = node_->data.size();
    return {};
  }

  Status truncate(uint64_t size) override {
    std::lock_guard<std::mutex> lock(fs_->mutex_);
    if (!writable_) return Status::failure(path_ + ": truncate of a file opened read-only");
    switch (fs_->next_point_locked()) {
      case Fault::None: break;
      case Fault::Crash:
      case Fault::TearCrash: return stopped_error(path_);
      default: return injected(path_, "truncate failed");
    }
    node_->data.resize(size);
    return {};
  }

  Status datasync() override {
    std::lock_guard<std::mutex> lock(fs_->mutex_);
    switch (fs_->next_point_locked()) {
      case Fault::None: break;
      case Fault::Crash:
      case Fault::TearCrash: return stopped_error(path_);
      default: return injected(path_, "fdatasync failed");
    }
    node_->durable = node_->data;
    return {};
  }

 private:
  Status write_locked(uint64_t offset, const void* data, size_t n) {
    if (!writable_) return Status::failure(path_ + ": write to a file opened read-only");
    Fault f = fs_->next_point_locked();
    size_t land = n;
    if (f == Fault::Fail || f == Fault::Crash) land = 0;
    if (f == Fault::ShortWrite || f == Fault::TearCrash) land = n / 2;
    std::string& d = node_->data;
    bool full = false;  // the disk is full: what fits lands, then ENOSPC
    if (fs_->capacity_ != UINT64_MAX && offset + land > d.size()) {
      uint64_t used = fs_->used_locked();
      uint64_t room = fs_->capacity_ > used ? fs_->capacity_ - used : 0;
      if (offset + land - d.size() > room) {
        full = true;
        uint64_t allowed = d.size() + room;  // the largest size this file may reach
        land = offset >= allowed ? 0 : static_cast<size_t>(std::min<uint64_t>(land, allowed - offset));
      }
    }
    if (land) {
      if (d.size() < offset + land) d.resize(offset + land, '\0');
      std::memcpy(d.data() + offset, data, land);
    }
    if (full && (f == Fault::None || f == Fault::Fail || f == Fault::ShortWrite))
      return Status::failure(path_ + ": write at offset " + std::to_string(offset) + " failed: No space left on device");
    if (f == Fault::None) return {};
    if (f == Fault::Crash || f == Fault::TearCrash) return stopped_error(path_);
    return injected(path_, "write failed");
  }

  FaultFileSystem* fs_;
  std::shared_ptr<FaultFileSystem::Node> node_;
  std::string path_;
  bool writable_;
};

Fault FaultFileSystem::next_point_locked() {
  if (stopped_) return Fault::Crash;
  uint64_t point = points_++;
  if (point != armed_point_) return Fault::None;
  if (armed_ == Fault::Crash || armed_ == Fault::TearCrash) stopped_ = true;
  return armed_;
}

Status FaultFileSystem::open(const std::string& path, OpenMode mode, std::unique_ptr<File>* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = names_.find(path);
  if (mode != OpenMode::Create) {
    if (it == names_.end()) return Status::failure(path + ": cannot open: No such file or directory");
    *out = std::make_unique<FaultFile>(this, it->second, path, mode == OpenMode::ReadWrite);
    return {};
  }
  if (!dirs_.count(parent_of(path))) return Status::failure(path + ": cannot open: No such file or directory");
  switch (next_point_locked()) {
    case Fault::None: break;
    case Fault::Crash:
    case Fault::TearCrash: return stopped_error(path);
    default: return injected(path, "cannot open");
  }
  if (it == names_.end()) it = names_.emplace(path, std::make_shared<Node>()).first;
  it->second->data.clear();  // O_TRUNC: the durable bytes stay until the next datasync
  *out = std::make_unique<FaultFile>(this, it->second, path, true);
  return {};
}

Status FaultFileSystem::rename(const std::string& from, const std::string& to) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = names_.find(from);
  if (it == names_.end() && dirs_.count(from)) return move_dir_locked(from, to, false);
  if (it == names_.end()) return Status::failure(from + ": cannot rename to " + to + ": No such file or directory");
  switch (next_point_locked()) {
    case Fault::None: break;
    case Fault::Crash:
    case Fault::TearCrash: return stopped_error(from);
    default: return injected(from, "cannot rename");
  }
  auto node = it->second;
  names_.erase(it);
  names_[to] = node;
  return {};
}

Status FaultFileSystem::move_dir_locked(const std::string& from, const std::string& to, bool swap) {
  if (!dirs_.count(from)) return Status::failure(from + ": cannot rename to " + to + ": No such file or directory");
  if (swap != (dirs_.count(to) > 0))
    return Status::failure(from + ": cannot " + (swap ? "exchange with " : "rename to ") + to + ": " +
                           (swap ? "No such file or directory" : "File exists"));
  switch (next_point_locked()) {
    case Fault::None: break;
    case Fault::Crash:
    case Fault::TearCrash: return stopped_error(from);
    default: return injected(from, swap ? "cannot exchange" : "cannot rename");
  }
  move_keys(names_, from, to, swap);
  move_keys(dirs_, from, to, swap);
  pending_moves_.push_back(DirMove{from, to, swap});
  return {};
}

Status FaultFileSystem::exchange(const std::string& a, const std::string& b) {
  std::lock_guard<std::mutex> lock(mutex_);
  return move_dir_locked(a, b, true);
}

Status FaultFileSystem::link(const std::string& from, const std::string& to) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = names_.find(from);
  if (it == names_.end()) return Status::failure(from + ": cannot link to " + to + ": No such file or directory");
  if (names_.count(to)) return Status::failure(from + ": cannot link to " + to + ": File exists");
  switch (next_point_locked()) {
    case Fault::None: break;
    case Fault::Crash:
    case Fault::TearCrash: return stopped_error(from);
    default: return injected(from, "cannot link");
  }
  names_[to] = it->second;
  return {};
}

Status FaultFileSystem::remove_dir(const std::string& dir) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!dirs_.count(dir)) return Status::failure(dir + ": cannot remove directory: No such file or directory");
  for (auto& [path, node] : names_)
    if (within(path, dir)) return Status::failure(dir + ": cannot remove directory: Directory not empty");
  for (auto& [path, durable] : dirs_)
    if (path != dir && within(path, dir)) return Status::failure(dir + ": cannot remove directory: Directory not empty");
  switch (next_point_locked()) {
    case Fault::None: break;
    case Fault::Crash:
    case Fault::TearCrash: return stopped_error(dir);
    default: return injected(dir, "cannot remove directory");
  }
  dirs_.erase(dir);
  // Gone at once, as make_dir makes one at once: no name survives in it after a crash.
  for (auto it = durable_names_.begin(); it != durable_names_.end();)
    it = within(it->first, dir) ? durable_names_.erase(it) : std::next(it);
  return {};
}

Status FaultFileSystem::unlink(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = names_.find(path);
  if (it == names_.end()) return Status::failure(path + ": cannot delete: No such file or directory");
  switch (next_point_locked()) {
    case Fault::None: break;
    case Fault::Crash:
    case Fault::TearCrash: return stopped_error(path);
    default: return injected(path, "cannot delete");
  }
  names_.erase(it);
  return {};
}

Status FaultFileSystem::sync_dir(const std::string& dir) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!dirs_.count(dir)) return Status::failure(dir + ": cannot open directory: No such file or directory");
  switch (next_point_locked()) {
    case Fault::None: break;
    case Fault::Crash:
    case Fault::TearCrash: return stopped_error(dir);
    default: return injected(dir, "directory fsync failed");
  }
  // Directory moves in this directory become durable, in the order they were made.
  for (auto it = pending_moves_.begin(); it != pending_moves_.end();) {
    if (parent_of(it->a) == dir && parent_of(it->b) == dir) {
      move_keys(durable_names_, it->a, it->b, it->swap);
      it = pending_moves_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = durable_names_.begin(); it != durable_names_.end();) {
    if (parent_of(it->first) == dir) it = durable_names_.erase(it);
    else ++it;
  }
  for (auto& [path, node] : names_)
    if (parent_of(path) == dir) durable_names_[path] = node;
  dirs_[dir] = true;
  return {};
}

Status FaultFileSystem::make_dir(const std::string& dir) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Directories themselves are durable at once; their parent can be synced.
  dirs_.emplace(dir, true);
  dirs_.emplace(parent_of(dir).empty() ? std::string("/") : parent_of(dir), true);
  return {};
}

Status FaultFileSystem::list_dir(const std::string& dir, std::vector<std::string>* names) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!dirs_.count(dir)) return Status::failure(dir + ": cannot list directory: No such file or directory");
  names->clear();
  for (auto& [path, node] : names_)
    if (parent_of(path) == dir) names->push_back(name_of(path));
  for (auto& [path, durable] : dirs_)
    if (parent_of(path) == dir && path != dir) names->push_back(name_of(path));
  return {};
}

Status FaultFileSystem::free_bytes(const std::string& dir, uint64_t* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!dirs_.count(dir)) return Status::failure(dir + ": statvfs failed: No such file or directory");
  uint64_t used = used_locked();
  *out = capacity_ == UINT64_MAX ? UINT64_MAX : capacity_ > used ? capacity_ - used : 0;
  return {};
}

uint64_t FaultFileSystem::used_locked() const {
  uint64_t used = 0;
  for (auto& [path, node] : names_) used += node->data.size();
  return used;
}

void FaultFileSystem::set_capacity(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  capacity_ = bytes;
}

void FaultFileSystem::arm(uint64_t point, Fault fault) {
  std::lock_guard<std::mutex> lock(mutex_);
  armed_point_ = point;
  armed_ = fault;
}

uint64_t FaultFileSystem::points() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return points_;
}

bool FaultFileSystem::stopped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stopped_;
}

void FaultFileSystem::crash(uint64_t keep_unsynced, bool zero_fill, int namespace_pick) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Directory moves not made durable are undone first, the latest first: the names below are then
  // compared where the durable namespace has them.
  for (auto it = pending_moves_.rbegin(); it != pending_moves_.rend(); ++it) {
    move_keys(names_, it->b, it->a, it->swap);
    move_keys(dirs_, it->b, it->a, it->swap);
  }
  pending_moves_.clear();
  if (namespace_pick) {
    std::vector<std::string> pending;  // paths whose current binding differs from the durable one
    for (auto& [path, node] : names_) {
      auto it = durable_names_.find(path);
      if (it == durable_names_.end() || it->second != node) pending.push_back(path);
    }
    for (auto& [path, node] : durable_names_)
      if (!names_.count(path)) pending.push_back(path);
    std::sort(pending.begin(), pending.end());
    for (size_t i = 0; i < pending.size(); ++i) {
      if (static_cast<int>(i % 2) != namespace_pick - 1) continue;
      auto it = names_.find(pending[i]);
      if (it == names_.end()) durable_names_.erase(pending[i]);
      else durable_names_[pending[i]] = it->second;
    }
  }
  names_ = durable_names_;
  for (auto& [path, node] : names_) {
    std::string kept;
    const std::string& d = node->data;
    // A torn write: part of what followed the durable bytes reached the disk anyway.
    if (keep_unsynced && d.size() > node->durable.size() && d.compare(0, node->durable.size(), node->durable) == 0) {
      kept = d.substr(node->durable.size(), keep_unsynced);
      if (zero_fill) std::fill(kept.begin(), kept.end(), '\0');
    }
    node->data = node->durable + kept;
    node->durable = node->data;  // what survived a crash is what the disk holds
  }
  armed_point_ = UINT64_MAX;
  armed_ = Fault::None;
  stopped_ = false;
}

void FaultFileSystem::restart_process() {
  std::lock_guard<std::mutex> lock(mutex_);
  armed_point_ = UINT64_MAX;
  armed_ = Fault::None;
  stopped_ = false;
}

std::string FaultFileSystem::contents(const std::string& path) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = names_.find(path);
  return it == names_.end() ? std::string() : it->second->data;
}

void FaultFileSystem::corrupt(const std::string& path, uint64_t offset, char byte) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = names_.find(path);
  if (it == names_.end() || offset >= it->second->data.size()) return;
  it->second->data[offset] = byte;
  it->second->durable = it->second->data;
}

}  // namespace pure::host
