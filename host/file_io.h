// host/file_io.h — the one seam between host/ and the disk: files, fsyncs, directory entries.
// Private to host/ and its tests. Two implementations: POSIX (file_posix.cpp) and an in-memory
// fault-injecting one (file_fault.h) that knows which bytes and names are durable.
//
// Durability model both follow: file bytes become durable at File::datasync(); a created,
// renamed or unlinked name becomes durable at FileSystem::sync_dir() of its directory. A write
// that returns an error may have written any prefix of its bytes.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "host/host.h"

namespace pure::host {

class File {
 public:
  virtual ~File() = default;
  // Writes all n bytes at the end of the file (error: some prefix may have been written).
  virtual Status append(const void* data, size_t n) = 0;
  // Writes all n bytes at offset (error: some prefix may have been written).
  virtual Status write_at(uint64_t offset, const void* data, size_t n) = 0;
  // Reads up to n bytes at offset; *got is less than n only at the end of the file.
  virtual Status read_at(uint64_t offset, void* data, size_t n, size_t* got) = 0;
  virtual Status size(uint64_t* out) = 0;
  virtual Status truncate(uint64_t size) = 0;
  virtual Status datasync() = 0;  // fdatasync (F_FULLFSYNC on macOS)
};

enum class OpenMode : uint8_t {
  Read,       // existing file, read only
  ReadWrite,  // existing file
  Create,     // new empty file, or an existing one truncated to 0
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;
  virtual Status open(const std::string& path, OpenMode mode, std::unique_ptr<File>* out) = 0;
  virtual Status rename(const std::string& from, const std::string& to) = 0;
  virtual Status unlink(const std::string& path) = 0;
  virtual Status sync_dir(const std::string& dir) = 0;
  virtual Status make_dir(const std::string& dir) = 0;  // ok if it exists
  // Names of the entries of dir (not "." or ".."), in no particular order.
  virtual Status list_dir(const std::string& dir, std::vector<std::string>* names) = 0;
  // Bytes an unprivileged process can still write on the file system that holds dir.
  virtual Status free_bytes(const std::string& dir, uint64_t* out) = 0;
  // A second name `to` for the file `from` (a hard link: the same bytes, durable as they are;
  // the new name durable at sync_dir of its directory). A file system without hard links (or
  // another device: EXDEV) fails, and the caller copies instead (host/backup.cpp).
  virtual Status link(const std::string& from, const std::string& to) {
    (void)from;
    return Status::failure(to + ": hard links are not supported here");
  }
  // Deletes the empty directory dir.
  virtual Status remove_dir(const std::string& dir) { return Status::failure(dir + ": cannot remove directories here"); }
  // Swaps the names of two directories in one step (renameat2 RENAME_EXCHANGE on Linux,
  // renamex_np RENAME_SWAP on macOS): a crash leaves the one or the other, never neither.
  virtual Status exchange(const std::string& a, const std::string& b) {
    (void)b;
    return Status::failure(a + ": an atomic exchange of two directories is not supported here");
  }
};

// Helpers on top of the interface.
std::string join_path(const std::string& dir, const std::string& name);
// Reads the whole file (for segments, which are bounded).
Status read_file(FileSystem& fs, const std::string& path, std::string* out);

}  // namespace pure::host
