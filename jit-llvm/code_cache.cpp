// jit-llvm/code_cache.cpp — the persistent code cache's entries (code_cache.h): reading one back
// and checking it whole, writing one atomically, and the size bound.
#include "jit-llvm/code_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <vector>

#include <llvm/Support/xxhash.h>

#include "base/limits.h"

namespace pure::jit::llvm_cache {

namespace {

constexpr char kMagic[8] = {'P', 'U', 'R', 'E', 'J', 'I', 'T', 'O'};
constexpr uint32_t kFormat = 1;  // this layout; an entry of another is ignored
constexpr const char kSuffix[] = ".pjo";

struct Header {
  char magic[8];
  uint32_t format;
  uint32_t header_bytes;
  uint64_t key_high, key_low;
  uint64_t object_bytes;
  double compile_ms;
  uint64_t checksum;  // xxh3 of the whole file with this field 0
};
static_assert(sizeof(Header) == 56);

uint64_t checksum_of(std::string& file) {
  Header h;
  std::memcpy(&h, file.data(), sizeof h);
  const uint64_t kept = h.checksum;
  h.checksum = 0;
  std::memcpy(file.data(), &h, sizeof h);
  const uint64_t sum = llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(file.data()), file.size()));
  h.checksum = kept;
  std::memcpy(file.data(), &h, sizeof h);
  return sum;
}

bool read_all(int fd, std::string& out, size_t bytes) {
  out.resize(bytes);
  size_t done = 0;
  while (done < bytes) {
    ssize_t n = ::read(fd, out.data() + done, bytes - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// mkdir -p, each new directory private to the user
bool make_directories(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) return S_ISDIR(st.st_mode);
  const size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0 && !make_directories(path.substr(0, slash))) return false;
  return ::mkdir(path.c_str(), 0700) == 0 || errno == EEXIST;
}

}  // namespace

std::string Key::hex() const {
  char text[33];
  std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(high), static_cast<unsigned long long>(low));
  return text;
}

bool CodeCache::load(const Key& key, std::string& object, double& compile_ms) {
  if (!enabled()) return false;
  const std::string path = directory_ + "/" + key.hex() + kSuffix;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  std::string file;
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) >= sizeof(Header) &&
            static_cast<uint64_t>(st.st_size) <= limits::kJitCacheBytes && read_all(fd, file, static_cast<size_t>(st.st_size));
  ::close(fd);
  if (!ok) return false;
  Header h;
  std::memcpy(&h, file.data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.format != kFormat || h.header_bytes != sizeof(Header) ||
      h.key_high != key.high || h.key_low != key.low || h.object_bytes != file.size() - sizeof(Header) ||
      h.checksum != checksum_of(file))
    return false;  // truncated, damaged, another format or another key: compiled again, written afresh
  object.assign(file, sizeof(Header), std::string::npos);
  compile_ms = h.compile_ms;
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // recently used: the last to be evicted
  return true;
}

void CodeCache::store(const Key& key, std::string_view object, double compile_ms) {
  if (!enabled() || sizeof(Header) + object.size() > limits::kJitCacheBytes) return;
  if (!made_) {
    if (!make_directories(directory_)) return complain("cannot make the directory", errno);
    made_ = true;
  }
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.format = kFormat;
  h.header_bytes = sizeof(Header);
  h.key_high = key.high;
  h.key_low = key.low;
  h.object_bytes = object.size();
  h.compile_ms = compile_ms;
  std::string file(reinterpret_cast<const char*>(&h), sizeof h);
  file.append(object);
  h.checksum = checksum_of(file);
  std::memcpy(file.data(), &h, sizeof h);

  const std::string name = key.hex() + kSuffix;
  const std::string temp = directory_ + "/." + name + "." + std::to_string(::getpid()) + "." + std::to_string(temp_count_++) + ".tmp";
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return complain("cannot write in it", errno);
  const bool written = write_all(fd, file);
  if (::close(fd) != 0 || !written || ::rename(temp.c_str(), (directory_ + "/" + name).c_str()) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    return complain("cannot write in it", error);
  }
  evict(name);
}

void CodeCache::evict(const std::string& kept) {
  DIR* dir = ::opendir(directory_.c_str());
  if (!dir) return;
  struct Entry {
    std::string name;
    timespec used;
    uint64_t bytes;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  const time_t now = ::time(nullptr);
  while (dirent* d = ::readdir(dir)) {
    std::string name = d->d_name;
    const bool entry = name.size() > sizeof kSuffix && name.compare(name.size() - (sizeof kSuffix - 1), std::string::npos, kSuffix) == 0 && name[0] != '.';
    const bool temp = name.size() > 4 && name[0] == '.' && name.compare(name.size() - 4, 4, ".tmp") == 0;
    if (!entry && !temp) continue;  // anything else in the directory is not ours
    struct stat st;
    if (::fstatat(::dirfd(dir), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    if (temp) {
      // a writer that died between writing and renaming (a live one renames within moments)
      if (now - st.st_mtim.tv_sec > 600) ::unlinkat(::dirfd(dir), name.c_str(), 0);
      continue;
    }
    total += static_cast<uint64_t>(st.st_size);
    if (name != kept) entries.push_back({name, st.st_mtim, static_cast<uint64_t>(st.st_size)});
  }
  if (total > limits::kJitCacheBytes) {
    std::sort(entries.begin(), entries.end(), [](const Entry& x, const Entry& y) {
      return x.used.tv_sec != y.used.tv_sec ? x.used.tv_sec < y.used.tv_sec : x.used.tv_nsec < y.used.tv_nsec;
    });
    for (const Entry& e : entries) {
      if (total <= limits::kJitCacheBytes) break;
      // another process may have removed or replaced it first: either way it is gone from the count
      ::unlinkat(::dirfd(dir), e.name.c_str(), 0);
      total -= e.bytes;
    }
  }
  ::closedir(dir);
}

void CodeCache::complain(const std::string& what, int error) {
  if (complained_) return;
  complained_ = true;
  std::fprintf(stderr, "pure-jit: the code cache PURE_JIT_CACHE=%s: %s (%s); compiled loops are not kept\n", directory_.c_str(),
               what.c_str(), std::strerror(error));
}

}  // namespace pure::jit::llvm_cache
