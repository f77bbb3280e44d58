// host/file_fault.h — an in-memory FileSystem that injects faults and simulates crashes, for the
// durability tests. Private to host/ and its tests; depends on file_io.h only.
//
// Each file keeps its current bytes and its durable bytes (as of its last datasync). Each path
// is bound to a file in the current namespace and, separately, in the durable namespace (as of
// the last sync_dir of its directory). crash() throws away everything not durable: names revert
// to the durable namespace and files to their durable bytes, optionally keeping a prefix of the
// unsynced tail (a torn write), as written or zero-filled.
//
// Fault points are the operations that change something or sync (open for create, append,
// write_at, truncate, datasync, rename, unlink, sync_dir, link, remove_dir, exchange), numbered
// from 0 in the order they happen.
//
// Directories are made durable at once (make_dir) and removed at once (remove_dir). A directory
// renamed or exchanged with another (backups, restores) moves with everything in it; the move is
// durable at the next sync_dir of its parent, and a crash before that undoes it. One fault can be armed at one point; reads never fault.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "host/file_io.h"

namespace pure::host {

enum class Fault : uint8_t {
  None,
  Fail,        // the operation fails and changes nothing; later ones work
  ShortWrite,  // a write lands half its bytes and fails; other operations: like Fail
  Crash,       // the machine stops before this operation: it and every later one fail
  TearCrash,   // a write lands half its bytes, then the machine stops as for Crash
};

class FaultFileSystem final : public FileSystem {
 public:
  Status open(const std::string& path, OpenMode mode, std::unique_ptr<File>* out) override;
  Status rename(const std::string& from, const std::string& to) override;
  Status unlink(const std::string& path) override;
  Status sync_dir(const std::string& dir) override;
  Status make_dir(const std::string& dir) override;
  Status list_dir(const std::string& dir, std::vector<std::string>* names) override;
  Status free_bytes(const std::string& dir, uint64_t* out) override;
  Status link(const std::string& from, const std::string& to) override;
  Status remove_dir(const std::string& dir) override;
  Status exchange(const std::string& a, const std::string& b) override;

  void arm(uint64_t point, Fault fault);  // replaces any armed fault
  // A full disk: the files' current bytes may not exceed capacity. A write that would pass it
  // lands what fits and fails with "No space left on device" (ENOSPC); free_bytes reports the room.
  void set_capacity(uint64_t bytes);
  uint64_t points() const;                // fault points passed so far
  bool stopped() const;                   // a Crash or TearCrash fired
  // Drops what is not durable. keep_unsynced: bytes of each file's unsynced tail to keep (a torn
  // write); zero_fill: the kept bytes read as zeros. A file system may also have written some of
  // the directory changes made since the last sync_dir, in any order: namespace_pick 1 keeps the
  // 1st, 3rd, ... of them (by path), 2 the 2nd, 4th, ...; 0 none. Resets the armed fault and the stop.
  void crash(uint64_t keep_unsynced = 0, bool zero_fill = false, int namespace_pick = 0);
  // The process died but the machine did not: every name and byte stays, synced or not.
  // Resets the armed fault and the stop.
  void restart_process();

  // Test access: the current bytes of a file ("" if absent), and overwrite them (durably).
  std::string contents(const std::string& path) const;
  void corrupt(const std::string& path, uint64_t offset, char byte);

  struct Node {
    std::string data;     // what reads see
    std::string durable;  // as of the last datasync
  };

 private:
  friend class FaultFile;
  // The fault to apply at the next point (and advances the count); Crash when stopped.
  Fault next_point_locked();

  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Node>> names_;
  std::map<std::string, std::shared_ptr<Node>> durable_names_;
  std::map<std::string, bool> dirs_;
  // Directory renames (swap false) and exchanges (true) not yet durable: undone by crash().
  struct DirMove {
    std::string a, b;
    bool swap;
  };
  std::vector<DirMove> pending_moves_;
  Status move_dir_locked(const std::string& from, const std::string& to, bool swap);
  uint64_t points_ = 0;
  uint64_t armed_point_ = UINT64_MAX;
  Fault armed_ = Fault::None;
  bool stopped_ = false;
  uint64_t capacity_ = UINT64_MAX;
  uint64_t used_locked() const;  // the current bytes of every named file
};

}  // namespace pure::host
