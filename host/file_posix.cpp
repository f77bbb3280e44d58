// host/file_posix.cpp — the real FileSystem: open/pwrite/pread/fdatasync/rename/unlink/fsync of
// directories. Must not buffer: every Status reflects what the kernel said.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "host/file_io.h"

namespace pure::host {

namespace {

Status os_error(const std::string& what, const std::string& path) {
  return Status::failure(path + ": " + what + ": " + std::strerror(errno));
}

int sync_fd(int fd) {
#if defined(__APPLE__)
  // fsync on macOS does not flush the drive's cache; F_FULLFSYNC does.
  if (fcntl(fd, F_FULLFSYNC) == 0) return 0;
  return fsync(fd);
#else
  return fdatasync(fd);
#endif
}

class PosixFile final : public File {
 public:
  PosixFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~PosixFile() override { ::close(fd_); }

  Status append(const void* data, size_t n) override {
    uint64_t end = 0;
    if (Status s = size(&end); !s.ok()) return s;
    return write_at(end, data, n);
  }

  Status write_at(uint64_t offset, const void* data, size_t n) override {
    auto* p = static_cast<const char*>(data);
    while (n > 0) {
      ssize_t w = ::pwrite(fd_, p, n, static_cast<off_t>(offset));
      if (w < 0) {
        if (errno == EINTR) continue;
        return os_error("write at offset " + std::to_string(offset) + " failed", path_);
      }
      p += w;
      n -= static_cast<size_t>(w);
      offset += static_cast<uint64_t>(w);
    }
    return {};
  }

  Status read_at(uint64_t offset, void* data, size_t n, size_t* got) override {
    auto* p = static_cast<char*>(data);
    size_t done = 0;
    while (done < n) {
      ssize_t r = ::pread(fd_, p + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0) {
        if (errno == EINTR) continue;
        return os_error("read at offset " + std::to_string(offset + done) + " failed", path_);
      }
      if (r == 0) break;
      done += static_cast<size_t>(r);
    }
    *got = done;
    return {};
  }

  Status size(uint64_t* out) override {
    struct stat st;
    if (fstat(fd_, &st) != 0) return os_error("stat failed", path_);
    *out = static_cast<uint64_t>(st.st_size);
    return {};
  }

  Status truncate(uint64_t size) override {
    if (ftruncate(fd_, static_cast<off_t>(size)) != 0) return os_error("truncate failed", path_);
    return {};
  }

  Status datasync() override {
    if (sync_fd(fd_) != 0) return os_error("fdatasync failed", path_);
    return {};
  }

 private:
  int fd_;
  std::string path_;
};

class PosixFileSystem final : public FileSystem {
 public:
  Status open(const std::string& path, OpenMode mode, std::unique_ptr<File>* out) override {
    int flags = O_CLOEXEC;
    switch (mode) {
      case OpenMode::Read: flags |= O_RDONLY; break;
      case OpenMode::ReadWrite: flags |= O_RDWR; break;
      case OpenMode::Create: flags |= O_RDWR | O_CREAT | O_TRUNC; break;
    }
    int fd;
    do fd = ::open(path.c_str(), flags, 0644);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) return os_error("cannot open", path);
    *out = std::make_unique<PosixFile>(fd, path);
    return {};
  }

  Status rename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) return os_error("cannot rename to " + to, from);
    return {};
  }

  Status unlink(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return os_error("cannot delete", path);
    return {};
  }

  Status sync_dir(const std::string& dir) override {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return os_error("cannot open directory", dir);
    int rc = fsync(fd);
    int saved = errno;
    ::close(fd);
    errno = saved;
    if (rc != 0) return os_error("directory fsync failed", dir);
    return {};
  }

  Status make_dir(const std::string& dir) override {
    if (::mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST) {
      struct stat st;
      if (stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return {};
      return Status::failure(dir + ": exists and is not a directory");
    }
    return os_error("cannot create directory", dir);
  }

  Status free_bytes(const std::string& dir, uint64_t* out) override {
    struct statvfs st;
    if (::statvfs(dir.c_str(), &st) != 0) return os_error("statvfs failed", dir);
    *out = static_cast<uint64_t>(st.f_bavail) * static_cast<uint64_t>(st.f_frsize);
    return {};
  }

  Status link(const std::string& from, const std::string& to) override {
    if (::link(from.c_str(), to.c_str()) != 0) return os_error("cannot link to " + to, from);
    return {};
  }

  Status remove_dir(const std::string& dir) override {
    if (::rmdir(dir.c_str()) != 0) return os_error("cannot remove directory", dir);
    return {};
  }

  Status exchange(const std::string& a, const std::string& b) override {
#if defined(__APPLE__)
    if (::renamex_np(a.c_str(), b.c_str(), RENAME_SWAP) != 0) return os_error("cannot exchange with " + b, a);
    return {};
#elif defined(__linux__) && defined(RENAME_EXCHANGE)
    if (::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) != 0)
      return os_error("cannot exchange with " + b, a);
    return {};
#else
    return FileSystem::exchange(a, b);
#endif
  }

  Status list_dir(const std::string& dir, std::vector<std::string>* names) override {
    DIR* d = opendir(dir.c_str());
    if (!d) return os_error("cannot list directory", dir);
    names->clear();
    while (dirent* e = readdir(d)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      names->push_back(e->d_name);
    }
    closedir(d);
    return {};
  }
};

}  // namespace

FileSystem& posix_file_system() {
  static PosixFileSystem fs;
  return fs;
}

std::string join_path(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

Status read_file(FileSystem& fs, const std::string& path, std::string* out) {
  std::unique_ptr<File> f;
  if (Status s = fs.open(path, OpenMode::Read, &f); !s.ok()) return s;
  uint64_t n = 0;
  if (Status s = f->size(&n); !s.ok()) return s;
  out->resize(n);
  size_t got = 0;
  if (Status s = f->read_at(0, out->data(), n, &got); !s.ok()) return s;
  out->resize(got);
  return {};
}

}  // namespace pure::host
