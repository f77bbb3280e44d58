// jit-llvm/code_cache.h — private to the LLVM engine: the persistent code cache (PURE_JIT_CACHE=DIR),
// compiled loops kept as object files in a directory that later runs, and other processes at the
// same time, load instead of compiling again. The engine computes the key (a 128-bit hash of all
// that determines the code: llvm_backend.cpp, cache_key); this file keeps entries under it.
//
// An entry is one file, DIR/<32 hex digits of the key>.pjo: a header (magic, format version, the
// key, the object's size, the processor time its compile took, a checksum of the whole file) and
// the object. It is written to a temporary file in DIR and renamed over its name, so a reader sees
// a whole entry or none; one that is truncated, damaged, of another format or under another key is
// ignored (the loop is compiled again and the entry written afresh), never loaded. A hit sets the
// entry's time to now; a store that takes the directory's entries over limits::kJitCacheBytes
// removes the least recently used first. Processes sharing the directory need nothing more: an
// entry removed under another's feet is a miss there, and two that write one key write the same
// bytes. Any failure to read or write is a miss, never a failed run; a directory that cannot be
// made or written is reported once on stderr.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace pure::jit::llvm_cache {

struct Key {
  uint64_t high = 0, low = 0;
  std::string hex() const;  // 32 lowercase hex digits, the entry's file name
};

class CodeCache {
 public:
  // `directory` empty: no cache (load finds nothing, store keeps nothing). Made, with its parents,
  // at the first store.
  explicit CodeCache(std::string directory) : directory_(std::move(directory)) {}
  bool enabled() const { return !directory_.empty(); }
  const std::string& directory() const { return directory_; }
  // The object kept under `key` and the processor time its compile took; false when there is no
  // whole, undamaged entry for it.
  bool load(const Key& key, std::string& object, double& compile_ms);
  // Keeps `object` under `key` (atomically replacing any entry there), then removes the least
  // recently used entries while the directory's entries exceed limits::kJitCacheBytes.
  void store(const Key& key, std::string_view object, double compile_ms);

 private:
  void evict(const std::string& kept);
  void complain(const std::string& what, int error);
  std::string directory_;
  bool complained_ = false;
  bool made_ = false;
  uint64_t temp_count_ = 0;
};

}  // namespace pure::jit::llvm_cache
