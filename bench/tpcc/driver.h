// bench/tpcc/driver.h: what the TPC-C driver's two files share (driver.cpp: the loader, the check
// and bank modes, measurement and the terminals' loop; transactions.cpp: each transaction's inputs
// and its run against pure-serve or SQLite): formatting, the generator of tpcc.pure bit for bit, the
// options, a transaction and a terminal, the sessions (pure-serve over HTTP/1.1 keep-alive, SQLite
// connections and their prepared statements).
#pragma once

#include <sqlite3.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cinttypes>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace tpcc {

[[noreturn]] inline void die(const std::string& message) {
  std::fprintf(stderr, "tpcc-driver: %s\n", message.c_str());
  std::exit(1);
}

inline std::string format(const char* fmt, ...) {
  char buf[4096];
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0 || n >= static_cast<int>(sizeof buf)) die("format overflow");
  return std::string(buf, static_cast<size_t>(n));
}

// Appends its arguments to s: texts as they are, integers in decimal. The terminals build every
// request body with it (vsnprintf was 45% of the driver's instructions, which share the machine's
// processor with pure-serve).
inline void put_one(std::string& s, const char* text) { s += text; }
inline void put_one(std::string& s, const std::string& text) { s += text; }
inline void put_one(std::string& s, int64_t v) {
  char b[24];
  auto r = std::to_chars(b, b + sizeof b, v);
  s.append(b, r.ptr);
}
template <class... A>
inline void put(std::string& s, const A&... a) {
  (put_one(s, a), ...);
}

// ---- the generator of tpcc.pure, bit for bit ----

inline uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
inline int64_t rand_int(int64_t state, int64_t lo, int64_t hi) {
  uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  uint64_t r = static_cast<uint64_t>((static_cast<unsigned __int128>(mix(static_cast<uint64_t>(state))) * range) >> 64);
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + r);
}
constexpr int64_t kTwo62 = int64_t{1} << 62;
inline int64_t mixin(int64_t state, int64_t v) { return rand_int(state, 0, kTwo62) + v; }
inline int64_t row_seed(int64_t seed, int64_t table, int64_t a, int64_t b, int64_t c) {
  return rand_int(mixin(mixin(mixin(mixin(seed, table), a), b), c), 0, kTwo62);
}
inline int64_t rnd(int64_t rs, int64_t k, int64_t lo, int64_t hi) { return rand_int(rs + k, lo, hi + 1); }

const char* const kLetters =
    "jpjomkefoiucDlNQgtYkIMJPvMJUqzDNLLgGxJCbUUrtlBczNvltFhjGyOuRQzlnGlQrPzAoILiIsDcouhNfHWRYYTKuHmvguTEKhCpqHKC"
    "nTSCpqglNnhFbQmBVeRLfuTvQEKFvViMlpZgfseIFtcCXSIICIHEcBmBppXzRxpGZuiwsfoxYYcqbHsVtwyjqQqFdfmUAgvIvqYEHyKrAC"
    "MIKyDZBTNieahGawFQRrIhHlIADvLZUypxlihhgILuDMyEFGImItjuIwxwTaYcxZMlmhkAZTjentWtpzSfkMJPKXskKVZXCtdMefcdmuji"
    "wLprNNPHSyMbqrlWivrMjInLriRfmoRiJOMytqaEGQZzuIrNACCGMWTGdBzzDOrjRdFiMulOWxPlJGGvVBhzElhmVbxvSYtfIBZMCCGnKU"
    "KiTURliiFRsKmmNPjugpRRNdLUClYaiVWrDWQpBqFiFkhEObxWaApiwZqpzgMHxlWyCfTcIenKJPCXONgTzvNLgsOXVipOyPZcoJLtrqTIQ"
    "LdearplCAzVOxbzikYbCcNoHipeAzXsgaEpJyHyFQFjUWiyhnsqDUgECXNVGxLsiUpMD";
const char* const kDigits =
    "8097527451711351102587942667872756677349658066411974319859031857668367988397556213132397079058699125";

inline std::string astr(int64_t rs, int64_t k, int64_t lo, int64_t hi) {
  int64_t n = rnd(rs, k, lo, hi);
  int64_t off = rnd(rs, k + 1, 0, 600 - n);
  return std::string(kLetters + off, static_cast<size_t>(n));
}
inline std::string nstr(int64_t rs, int64_t k, int64_t n) {
  int64_t off = rnd(rs, k, 0, 100 - n);
  return std::string(kDigits + off, static_cast<size_t>(n));
}
inline std::string data_text(int64_t rs, int64_t k, int64_t lo, int64_t hi) {
  std::string t = astr(rs, k, lo, hi);
  if (rnd(rs, k + 2, 1, 10) != 1) return t;
  int64_t at = rnd(rs, k + 3, 0, static_cast<int64_t>(t.size()) - 8);
  t.replace(static_cast<size_t>(at), 8, "ORIGINAL");
  return t;
}
inline std::string zip(int64_t rs, int64_t k) { return nstr(rs, k, 4) + "11111"; }
inline int64_t nurand(int64_t rs, int64_t k, int64_t a, int64_t x, int64_t y, int64_t c) {
  return ((rnd(rs, k, 0, a) | rnd(rs, k + 1, x, y)) + c) % (y - x + 1) + x;
}
inline std::string last_name(int64_t n) {
  static const char* const syl[] = {"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"};
  return std::string(syl[n / 100]) + syl[n / 10 % 10] + syl[n % 10];
}
enum Table : int64_t { kItem = 1, kWarehouse, kDistrict, kStock, kCustomer, kHistory, kOrder, kPerm, kLine };
constexpr int64_t kCLastLoad = 157, kCLastRun = 223, kCId = 259, kOlIId = 7911;

// ---- options ----

struct Options {
  std::string system;
  std::string host = "127.0.0.1";
  int port = 0;
  int server_pid = 0;
  std::string db;
  bool load = false;
  int warehouses = 1, items = 100000, customers = 3000, terminals = 1;
  double warmup = 2, seconds = 10;
  long transactions = 0;  // per terminal; 0 = run for the duration
  int64_t seed = 1;
  std::string label, setting = "ram";
  // SQLite
  std::string journal = "wal", synchronous = "off", locking = "normal";
  bool without_rowid = true, shared = false;
  long cache_kb = 262144;
  long long mmap_bytes = 0;
  bool dump = false;  // print a digest of every table (check mode) instead of running
  bool consistency_only = false;
  bool bank = false;  // the bank queries instead of TPC-C
  bool new_order_only = false;  // every transaction a New-Order (its cost alone), same random stream
  bool skip_consistency = false;  // no consistency query after the run (count_instructions counts only the mix)
  std::string sched = "normal";   // the terminals' policy: normal, or batch (SCHED_BATCH)
};

// ---- a transaction's inputs (clauses 2.4.1 to 2.8.1) ----

enum Kind { kNewOrder, kPayment, kOrderStatus, kDelivery, kStockLevel, kKinds };
const char* const kKindName[] = {"new_order", "payment", "order_status", "delivery", "stock_level"};

struct Line { int64_t i_id, supply_w_id, quantity; };
struct Tx {
  Kind kind;
  int64_t w, d, c_w, c_d, c_id, amount, carrier, threshold, now;
  bool by_name, rollback;
  std::string last;
  std::vector<Line> lines;
};

struct Terminal {
  int64_t w, d;  // home warehouse, and the district of its stock-level transactions
  uint64_t rng;
  int64_t next() {
    rng = mix(rng);
    return static_cast<int64_t>(rng >> 2);  // a state for rnd(); below 2^62
  }
};
// The terminal's next transaction (clause 5.2.3's mix, or New-Order only), at the clock value `now`.
void make_tx(Terminal& t, const Options& o, int64_t now, Tx& tx);

enum class Result { kOk, kRollback, kError };

// One terminal's connection to a system.
class Session {
 public:
  virtual ~Session() = default;
  virtual Result run(const Tx& tx, std::string& error) = 0;
};

// ---- pure-serve over HTTP/1.1 keep-alive ----

class Http {
 public:
  Http(const std::string& host, int port) : host_(host) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) die("socket failed");
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1) die("bad host " + host);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) die(format("cannot connect to %s:%d", host.c_str(), port));
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  ~Http() { ::close(fd_); }
  // Sends one request and reads the reply; returns the status, the body in `body`.
  int request(const char* method, const std::string& path, const std::string& payload, std::string& body) {
    req_.clear();
    req_ += method;
    req_ += ' ';
    req_ += path;
    req_ += " HTTP/1.1\r\nHost: ";  // the address connected to: pure-serve serves only its own names
    req_ += host_;
    req_ += "\r\nContent-Type: application/json\r\nContent-Length: ";
    req_ += std::to_string(payload.size());
    req_ += "\r\n\r\n";
    req_ += payload;
    size_t sent = 0;
    while (sent < req_.size()) {
      ssize_t n = ::send(fd_, req_.data() + sent, req_.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) die("send failed (server gone?)");
      sent += static_cast<size_t>(n);
    }
    // read the head
    size_t head_end;
    while ((head_end = buf_.find("\r\n\r\n")) == std::string::npos) fill();
    int status = std::atoi(buf_.c_str() + 9);
    size_t length = 0;
    for (size_t p = 0; p < head_end;) {
      size_t e = buf_.find("\r\n", p);
      if (e - p > 15 && strncasecmp(buf_.c_str() + p, "content-length:", 15) == 0)
        length = std::strtoull(buf_.c_str() + p + 15, nullptr, 10);
      p = e + 2;
    }
    while (buf_.size() < head_end + 4 + length) fill();
    body.assign(buf_, head_end + 4, length);
    buf_.erase(0, head_end + 4 + length);
    return status;
  }

 private:
  void fill() {
    char tmp[65536];
    ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
    if (n <= 0) die("the server closed the connection");
    buf_.append(tmp, static_cast<size_t>(n));
  }
  std::string host_;
  int fd_;
  std::string buf_, req_;
};

class PureSession : public Session {
 public:
  PureSession(const Options& o) : http_(o.host, o.port) {}
  Result run(const Tx& tx, std::string& error) override;
  Http& http() { return http_; }

 private:
  Http http_;
  std::string payload_, body_, path_;
};

// ---- SQLite ----

class Db {
 public:
  explicit Db(const std::string& path, const Options& o, bool create) {
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
    if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) die("cannot open " + path);
    sqlite3_busy_handler(db_, &Db::busy, nullptr);
    exec("PRAGMA journal_mode=" + o.journal);
    exec("PRAGMA synchronous=" + o.synchronous);
    exec("PRAGMA locking_mode=" + o.locking);
    exec(format("PRAGMA cache_size=-%ld", o.cache_kb));
    exec(format("PRAGMA mmap_size=%lld", o.mmap_bytes));
    exec("PRAGMA temp_store=memory");
  }
  ~Db() {
    for (auto* s : stmts_) sqlite3_finalize(s);
    sqlite3_close(db_);
  }
  // Waiting for another connection's lock: yield a few times, then sleep longer and longer (up
  // to 1 ms), so that waiting terminals leave the processor to the one holding the lock.
  static int busy(void*, int count) {
    if (count < 8) sched_yield(); else usleep(static_cast<useconds_t>(std::min(1000, 10 * count)));
    return count < 200000;
  }
  void exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string m = err ? err : "?";
      sqlite3_free(err);
      die(sql + ": " + m);
    }
  }
  sqlite3_stmt* prepare(const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v3(db_, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr) != SQLITE_OK)
      die(sql + ": " + sqlite3_errmsg(db_));
    stmts_.push_back(s);
    return s;
  }
  sqlite3* handle() { return db_; }

 private:
  sqlite3* db_ = nullptr;
  std::vector<sqlite3_stmt*> stmts_;
};

// A statement in use: binds, steps, resets on scope exit.
class Q {
 public:
  explicit Q(sqlite3_stmt* s) : s_(s) {}
  ~Q() { sqlite3_reset(s_); sqlite3_clear_bindings(s_); }
  Q& i(int64_t v) { sqlite3_bind_int64(s_, ++n_, v); return *this; }
  Q& t(const std::string& v) { sqlite3_bind_text(s_, ++n_, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT); return *this; }
  bool row() {
    int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw std::runtime_error(sqlite3_errmsg(sqlite3_db_handle(s_)));
  }
  void done() { if (row()) throw std::runtime_error("unexpected row"); }
  int64_t col(int c) { return sqlite3_column_int64(s_, c); }
  std::string text(int c) {
    auto p = reinterpret_cast<const char*>(sqlite3_column_text(s_, c));
    return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(s_, c))) : std::string();
  }

 private:
  sqlite3_stmt* s_;
  int n_ = 0;
};

// The transactions in SQL, with prepared statements. One per connection.
struct SqlStatements {
  explicit SqlStatements(Db& db) {
    w_tax = db.prepare("SELECT tax FROM warehouse WHERE w_id=?");
    d_next = db.prepare("SELECT tax, next_o_id FROM district WHERE w_id=? AND d_id=?");
    d_bump = db.prepare("UPDATE district SET next_o_id=? WHERE w_id=? AND d_id=?");
    c_disc = db.prepare("SELECT discount, last, credit FROM customer WHERE w_id=? AND d_id=? AND c_id=?");
    o_ins = db.prepare("INSERT INTO orders VALUES (?,?,?,?,?,0,?,?)");
    no_ins = db.prepare("INSERT INTO new_order VALUES (?,?,?)");
    i_get = db.prepare("SELECT price, name, data FROM item WHERE i_id=?");
    for (int d = 1; d <= 10; d++)
      s_get[d] = db.prepare(format("SELECT quantity, dist_%02d, data, ytd, order_cnt, remote_cnt FROM stock WHERE w_id=? AND i_id=?", d));
    s_upd = db.prepare("UPDATE stock SET quantity=?, ytd=?, order_cnt=?, remote_cnt=? WHERE w_id=? AND i_id=?");
    ol_ins = db.prepare("INSERT INTO order_line VALUES (?,?,?,?,?,?,0,?,?,?)");
    w_pay = db.prepare("UPDATE warehouse SET ytd=ytd+? WHERE w_id=? RETURNING name, street_1, street_2, city, state, zip");
    d_pay = db.prepare("UPDATE district SET ytd=ytd+? WHERE w_id=? AND d_id=? RETURNING name, street_1, street_2, city, state, zip");
    c_by_name = db.prepare("SELECT c_id FROM customer WHERE w_id=? AND d_id=? AND last=? ORDER BY first, c_id");
    c_get = db.prepare("SELECT first, middle, last, street_1, street_2, city, state, zip, phone, since, credit,"
                       " credit_lim, discount, balance, ytd_payment, payment_cnt, data FROM customer"
                       " WHERE w_id=? AND d_id=? AND c_id=?");
    c_pay = db.prepare("UPDATE customer SET balance=?, ytd_payment=?, payment_cnt=?, data=? WHERE w_id=? AND d_id=? AND c_id=?");
    h_ins = db.prepare("INSERT INTO history VALUES (?,?,?,?,?,?,?,?)");
    c_status = db.prepare("SELECT balance, first, middle, last FROM customer WHERE w_id=? AND d_id=? AND c_id=?");
    o_last = db.prepare("SELECT o_id, entry_d, carrier_id FROM orders WHERE w_id=? AND d_id=? AND c_id=? ORDER BY o_id DESC LIMIT 1");
    ol_get = db.prepare("SELECT i_id, supply_w_id, quantity, amount, delivery_d FROM order_line WHERE w_id=? AND d_id=? AND o_id=?");
    no_first = db.prepare("SELECT o_id FROM new_order WHERE w_id=? AND d_id=? ORDER BY o_id LIMIT 1");
    no_del = db.prepare("DELETE FROM new_order WHERE w_id=? AND d_id=? AND o_id=?");
    o_carrier = db.prepare("UPDATE orders SET carrier_id=? WHERE w_id=? AND d_id=? AND o_id=? RETURNING c_id");
    ol_deliver = db.prepare("UPDATE order_line SET delivery_d=? WHERE w_id=? AND d_id=? AND o_id=? RETURNING amount");
    c_deliver = db.prepare("UPDATE customer SET balance=balance+?, delivery_cnt=delivery_cnt+1 WHERE w_id=? AND d_id=? AND c_id=?");
    d_next_only = db.prepare("SELECT next_o_id FROM district WHERE w_id=? AND d_id=?");
    stock_low = db.prepare("SELECT COUNT(DISTINCT s.i_id) FROM order_line ol JOIN stock s ON s.w_id=ol.w_id AND s.i_id=ol.i_id"
                           " WHERE ol.w_id=? AND ol.d_id=? AND ol.o_id>=? AND ol.o_id<? AND s.quantity<?");
    begin = db.prepare("BEGIN");
    begin_write = db.prepare("BEGIN IMMEDIATE");
    commit = db.prepare("COMMIT");
    rollback = db.prepare("ROLLBACK");
  }
  sqlite3_stmt *w_tax, *d_next, *d_bump, *c_disc, *o_ins, *no_ins, *i_get, *s_get[11], *s_upd, *ol_ins, *w_pay, *d_pay,
      *c_by_name, *c_get, *c_pay, *h_ins, *c_status, *o_last, *ol_get, *no_first, *no_del, *o_carrier, *ol_deliver,
      *c_deliver, *d_next_only, *stock_low, *begin, *begin_write, *commit, *rollback;
};

// Runs one transaction on a connection; a rollback is a ROLLBACK statement.
Result sql_run(SqlStatements& s, const Tx& tx, std::string& error);

class SqliteSession : public Session {
 public:
  SqliteSession(const Options& o) : db_(o.db, o, false), s_(db_) {}
  Result run(const Tx& tx, std::string& error) override { return sql_run(s_, tx, error); }

 private:
  Db db_;
  SqlStatements s_;
};

// One connection for every terminal, behind a mutex.
struct SharedSqlite {
  explicit SharedSqlite(const Options& o) : db(o.db, o, false), s(db) {}
  Db db;
  SqlStatements s;
  std::mutex mutex;
};
class SharedSession : public Session {
 public:
  explicit SharedSession(SharedSqlite& shared) : shared_(shared) {}
  Result run(const Tx& tx, std::string& error) override {
    std::lock_guard<std::mutex> lock(shared_.mutex);
    return sql_run(shared_.s, tx, error);
  }

 private:
  SharedSqlite& shared_;
};

}  // namespace tpcc
