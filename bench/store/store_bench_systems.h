// bench/store/store_bench_systems.h — the systems the store benchmark compares: one interface
// over Pure's store, std::map, SQLite (in memory, WITHOUT ROWID) and a sorted C array.
// Depends on runtime/store.h and sqlite3 only.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace store_bench {

// Rows are (a, b) -> v with a composite key, all 64-bit integers: 24 bytes of state per row.
struct Key {
  int64_t a, b;
};

class System {
 public:
  virtual ~System() = default;
  virtual std::string name() const = 0;
  virtual void load(const std::vector<Key>& keys) = 0;  // v = a * 31 + b
  virtual int64_t get(const std::vector<Key>& keys) = 0;  // sum of v found
  virtual void put(const std::vector<Key>& keys, int64_t add) = 0;  // v += add for each (replace)
  virtual int64_t scan() = 0;                                       // sum over all rows in order
  virtual int64_t scan_runs() { return scan(); }                    // the same, as the VM's loops read
  virtual int64_t prefix(const std::vector<int64_t>& groups) = 0;   // sum of v over rows with a = g
  // Events: each reads two rows and moves one unit of v from one to the other, atomically.
  enum class EventEnd { Commit, CommitAndPublish, Rollback };
  virtual bool supports_events() const { return false; }
  virtual void events(const std::vector<Key>& keys, size_t count, EventEnd end) {}
};

std::unique_ptr<System> make_pure_system();
std::unique_ptr<System> make_map_system();
std::unique_ptr<System> make_sqlite_system();
std::unique_ptr<System> make_array_system();

}  // namespace store_bench
