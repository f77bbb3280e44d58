// bench/store/store_bench_systems.cpp — Pure's store, std::map, SQLite and a sorted array behind
// one small interface, so the benchmark runs the same work on each.
// Depends on runtime/store.h and sqlite3 only.
#include "store_bench_systems.h"

#include <sqlite3.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "runtime/store.h"

namespace store_bench {
namespace {

using pure::rt::Cell;

int64_t value_of(const Key& k) { return k.a * 31 + k.b; }

class PureSystem final : public System {
 public:
  PureSystem() {
    pure::rt::ListSchema rows{"rows", false, {pure::rt::ColType::Int, pure::rt::ColType::Int}, {pure::rt::ColType::Int}};
    store_ = pure::rt::make_store({rows});
  }
  std::string name() const override { return "pure"; }
  void load(const std::vector<Key>& keys) override {
    auto& list = store_->list(0);
    for (const Key& k : keys) {
      Cell row[3] = {Cell(k.a), Cell(k.b), Cell(value_of(k))};
      list.put(row);
    }
    snapshot_ = store_->publish();
  }
  // Reads go through a snapshot: that is what queries read.
  int64_t get(const std::vector<Key>& keys) override {
    const auto& list = snapshot_->list(0);
    int64_t sum = 0;
    for (const Key& k : keys) {
      Cell key[2] = {Cell(k.a), Cell(k.b)};
      if (const Cell* row = list.find(key)) sum += static_cast<int64_t>(row[2]);
    }
    return sum;
  }
  void put(const std::vector<Key>& keys, int64_t add) override {
    auto& list = store_->list(0);
    snapshot_.reset();
    for (const Key& k : keys) {
      Cell row[3] = {Cell(k.a), Cell(k.b), Cell(value_of(k) + add)};
      list.put(row);
    }
    snapshot_ = store_->publish();
  }
  int64_t scan() override {
    int64_t sum = 0;
    for (auto c = snapshot_->list(0).scan(); c->valid(); c->next()) sum += static_cast<int64_t>(c->row()[2]);
    return sum;
  }
  // Cursor::take_run: runs of rows side by side in one leaf, one virtual call per run.
  int64_t scan_runs() override {
    int64_t sum = 0;
    auto cursor = snapshot_->list(0).scan();
    const Cell* rows = nullptr;
    while (size_t n = cursor->take_run(&rows, 256))
      for (size_t i = 0; i < n; ++i) sum += static_cast<int64_t>(rows[i * 3 + 2]);
    return sum;
  }
  int64_t prefix(const std::vector<int64_t>& groups) override {
    int64_t sum = 0;
    const auto& list = snapshot_->list(0);
    for (int64_t g : groups) {
      Cell p = Cell(g);
      for (auto c = list.prefix(&p, 1); c->valid(); c->next()) sum += static_cast<int64_t>(c->row()[2]);
    }
    return sum;
  }
  bool supports_events() const override { return true; }
  void events(const std::vector<Key>& keys, size_t count, EventEnd end) override {
    auto& list = store_->list(0);
    snapshot_.reset();
    std::shared_ptr<const pure::rt::Snapshot> latest;
    for (size_t i = 0; i < count; ++i) {
      const Key& from = keys[(2 * i) % keys.size()];
      const Key& to = keys[(2 * i + 1) % keys.size()];
      Cell fk[2] = {Cell(from.a), Cell(from.b)}, tk[2] = {Cell(to.a), Cell(to.b)};
      store_->begin();
      const Cell* f = list.find(fk);
      const Cell* t = list.find(tk);
      if (!f || !t) {
        store_->rollback();
        continue;
      }
      int64_t fv = static_cast<int64_t>(f[2]), tv = static_cast<int64_t>(t[2]);
      list.set_field(fk, 0, Cell(fv - 1));
      list.set_field(tk, 0, Cell(tv + 1));
      if (end == EventEnd::Rollback) {
        store_->rollback();
        continue;
      }
      store_->commit();
      if (end == EventEnd::CommitAndPublish) latest = store_->publish();
    }
    latest.reset();
    snapshot_ = store_->publish();
  }
  pure::rt::Store& store() { return *store_; }

 private:
  std::unique_ptr<pure::rt::Store> store_;
  std::shared_ptr<const pure::rt::Snapshot> snapshot_;
};

class MapSystem final : public System {
 public:
  std::string name() const override { return "std::map"; }
  void load(const std::vector<Key>& keys) override {
    for (const Key& k : keys) rows_[{k.a, k.b}] = value_of(k);
  }
  int64_t get(const std::vector<Key>& keys) override {
    int64_t sum = 0;
    for (const Key& k : keys) {
      auto it = rows_.find({k.a, k.b});
      if (it != rows_.end()) sum += it->second;
    }
    return sum;
  }
  void put(const std::vector<Key>& keys, int64_t add) override {
    for (const Key& k : keys) rows_[{k.a, k.b}] = value_of(k) + add;
  }
  int64_t scan() override {
    int64_t sum = 0;
    for (const auto& kv : rows_) sum += kv.second;
    return sum;
  }
  int64_t prefix(const std::vector<int64_t>& groups) override {
    int64_t sum = 0;
    for (int64_t g : groups)
      for (auto it = rows_.lower_bound({g, INT64_MIN}); it != rows_.end() && it->first.first == g; ++it) sum += it->second;
    return sum;
  }

 private:
  std::map<std::pair<int64_t, int64_t>, int64_t> rows_;
};

// The floor: rows sorted in one array, found by binary search.
class ArraySystem final : public System {
 public:
  std::string name() const override { return "c"; }
  void load(const std::vector<Key>& keys) override {
    rows_.reserve(keys.size());
    for (const Key& k : keys) rows_.push_back({k.a, k.b, value_of(k)});
    std::sort(rows_.begin(), rows_.end(), less);
  }
  int64_t get(const std::vector<Key>& keys) override {
    int64_t sum = 0;
    for (const Key& k : keys)
      if (Row* r = find(k)) sum += r->v;
    return sum;
  }
  void put(const std::vector<Key>& keys, int64_t add) override {
    for (const Key& k : keys)
      if (Row* r = find(k)) r->v = value_of(k) + add;
  }
  int64_t scan() override {
    int64_t sum = 0;
    for (const Row& r : rows_) sum += r.v;
    return sum;
  }
  int64_t prefix(const std::vector<int64_t>& groups) override {
    int64_t sum = 0;
    for (int64_t g : groups)
      for (auto it = std::lower_bound(rows_.begin(), rows_.end(), Row{g, INT64_MIN, 0}, less); it != rows_.end() && it->a == g; ++it)
        sum += it->v;
    return sum;
  }

 private:
  struct Row {
    int64_t a, b, v;
  };
  static bool less(const Row& x, const Row& y) { return x.a != y.a ? x.a < y.a : x.b < y.b; }
  Row* find(const Key& k) {
    auto it = std::lower_bound(rows_.begin(), rows_.end(), Row{k.a, k.b, 0}, less);
    return it != rows_.end() && it->a == k.a && it->b == k.b ? &*it : nullptr;
  }
  std::vector<Row> rows_;
};

class SqliteSystem final : public System {
 public:
  SqliteSystem() {
    check(sqlite3_open(":memory:", &db_));
    exec("PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF; PRAGMA cache_size=-2000000; PRAGMA temp_store=MEMORY;");
    exec("CREATE TABLE rows(a INTEGER NOT NULL, b INTEGER NOT NULL, v INTEGER NOT NULL, PRIMARY KEY(a, b)) WITHOUT ROWID;");
    get_ = prepare("SELECT v FROM rows WHERE a = ?1 AND b = ?2");
    put_ = prepare("INSERT OR REPLACE INTO rows(a, b, v) VALUES (?1, ?2, ?3)");
    scan_ = prepare("SELECT v FROM rows ORDER BY a, b");
    prefix_ = prepare("SELECT v FROM rows WHERE a = ?1 ORDER BY b");
    add_ = prepare("UPDATE rows SET v = v + ?3 WHERE a = ?1 AND b = ?2");
    begin_ = prepare("BEGIN");
    commit_ = prepare("COMMIT");
    rollback_ = prepare("ROLLBACK");
  }
  ~SqliteSystem() override {
    for (sqlite3_stmt* s : {get_, put_, scan_, prefix_, add_, begin_, commit_, rollback_}) sqlite3_finalize(s);
    sqlite3_close(db_);
  }
  std::string name() const override { return "sqlite"; }
  void load(const std::vector<Key>& keys) override {
    exec("BEGIN");
    for (const Key& k : keys) write(k, value_of(k));
    exec("COMMIT");
  }
  int64_t get(const std::vector<Key>& keys) override {
    int64_t sum = 0;
    for (const Key& k : keys) {
      sqlite3_bind_int64(get_, 1, k.a);
      sqlite3_bind_int64(get_, 2, k.b);
      if (sqlite3_step(get_) == SQLITE_ROW) sum += sqlite3_column_int64(get_, 0);
      sqlite3_reset(get_);
    }
    return sum;
  }
  void put(const std::vector<Key>& keys, int64_t add) override {
    exec("BEGIN");
    for (const Key& k : keys) write(k, value_of(k) + add);
    exec("COMMIT");
  }
  int64_t scan() override {
    int64_t sum = 0;
    while (sqlite3_step(scan_) == SQLITE_ROW) sum += sqlite3_column_int64(scan_, 0);
    sqlite3_reset(scan_);
    return sum;
  }
  int64_t prefix(const std::vector<int64_t>& groups) override {
    int64_t sum = 0;
    for (int64_t g : groups) {
      sqlite3_bind_int64(prefix_, 1, g);
      while (sqlite3_step(prefix_) == SQLITE_ROW) sum += sqlite3_column_int64(prefix_, 0);
      sqlite3_reset(prefix_);
    }
    return sum;
  }
  bool supports_events() const override { return true; }
  // The same event as Pure's: read both rows, move one unit, one transaction each.
  void events(const std::vector<Key>& keys, size_t count, EventEnd end) override {
    for (size_t i = 0; i < count; ++i) {
      const Key& from = keys[(2 * i) % keys.size()];
      const Key& to = keys[(2 * i + 1) % keys.size()];
      step_done(begin_);
      bool found = read(from) && read(to);
      if (found) {
        add(from, -1);
        add(to, 1);
      }
      step_done(end == EventEnd::Rollback ? rollback_ : commit_);
    }
  }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) throw std::runtime_error(sqlite3_errmsg(db_));
  }
  void exec(const char* sql) { check(sqlite3_exec(db_, sql, nullptr, nullptr, nullptr)); }
  sqlite3_stmt* prepare(const char* sql) {
    sqlite3_stmt* s = nullptr;
    check(sqlite3_prepare_v2(db_, sql, -1, &s, nullptr));
    return s;
  }
  void step_done(sqlite3_stmt* s) {
    check(sqlite3_step(s));
    sqlite3_reset(s);
  }
  void write(const Key& k, int64_t v) {
    sqlite3_bind_int64(put_, 1, k.a);
    sqlite3_bind_int64(put_, 2, k.b);
    sqlite3_bind_int64(put_, 3, v);
    step_done(put_);
  }
  bool read(const Key& k) {
    sqlite3_bind_int64(get_, 1, k.a);
    sqlite3_bind_int64(get_, 2, k.b);
    bool found = sqlite3_step(get_) == SQLITE_ROW;
    sqlite3_reset(get_);
    return found;
  }
  void add(const Key& k, int64_t amount) {
    sqlite3_bind_int64(add_, 1, k.a);
    sqlite3_bind_int64(add_, 2, k.b);
    sqlite3_bind_int64(add_, 3, amount);
    step_done(add_);
  }

  sqlite3* db_ = nullptr;
  sqlite3_stmt *get_, *put_, *scan_, *prefix_, *add_, *begin_, *commit_, *rollback_;
};

}  // namespace

std::unique_ptr<System> make_pure_system() { return std::make_unique<PureSystem>(); }
std::unique_ptr<System> make_map_system() { return std::make_unique<MapSystem>(); }
std::unique_ptr<System> make_sqlite_system() { return std::make_unique<SqliteSystem>(); }
std::unique_ptr<System> make_array_system() { return std::make_unique<ArraySystem>(); }

}  // namespace store_bench
