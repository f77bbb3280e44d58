// bench/tpcc/driver.cpp: the TPC-C terminals, against pure-serve (bench/tpcc/tpcc.pure over HTTP) or
// against SQLite (the same transactions in SQL, in this process). N terminals, each a thread with
// its own keep-alive connection (or SQLite connection, or one shared connection behind a mutex);
// the mix 45/43/4/4/4 of clause 5.2.3 without think time; a warm-up, then a measured duration (or
// a fixed count of transactions per terminal, for the check mode). Prints one JSON line per run
// (shared/design/bench-format.md) on stdout; progress goes to stderr.
//
//   tpcc-driver --system pure --port P --server-pid PID [--load] [options]
//   tpcc-driver --system sqlite --db /dev/shm/tpcc.db [--load] [sqlite options] [options]
//
// Loading: for Pure through the API (the load_* events of tpcc.pure, in chunks); for SQLite with
// the same generator, written again here (keep the two in step: check mode compares the tables).
// This file: the loaders, the consistency checks, check mode's dumps, the bank runs, measurement,
// the options and the terminals' loop with its report; the transactions are transactions.cpp,
// what both share driver.h.
#include "driver.h"

using namespace tpcc;

namespace {

void pure_call(Http& http, const std::string& name, const std::string& payload, std::string& body) {
  int status = http.request("POST", "/v1/tpcc/" + name, payload, body);
  if (status != 200) die(format("%s %s: HTTP %d %s", name.c_str(), payload.c_str(), status, body.c_str()));
}

void pure_load(const Options& o) {
  Http http(o.host, o.port);
  std::string body;
  const int chunk = 1000;
  auto t0 = std::chrono::steady_clock::now();
  for (int f = 1; f <= o.items; f += chunk)
    pure_call(http, "load_items", format("{\"seed\":%" PRId64 ",\"from\":%d,\"to\":%d}", o.seed, f, std::min(f + chunk, o.items + 1)), body);
  for (int w = 1; w <= o.warehouses; w++) {
    pure_call(http, "load_warehouse", format("{\"seed\":%" PRId64 ",\"w\":%d,\"customers\":%d}", o.seed, w, o.customers), body);
    for (int f = 1; f <= o.items; f += chunk)
      pure_call(http, "load_stock", format("{\"seed\":%" PRId64 ",\"w\":%d,\"from\":%d,\"to\":%d}", o.seed, w, f,
                                           std::min(f + chunk, o.items + 1)), body);
    for (int d = 1; d <= 10; d++) {
      for (int f = 1; f <= o.customers; f += chunk)
        pure_call(http, "load_customers", format("{\"seed\":%" PRId64 ",\"w\":%d,\"d\":%d,\"from\":%d,\"to\":%d,\"now\":1}",
                                                 o.seed, w, d, f, std::min(f + chunk, o.customers + 1)), body);
      for (int f = 1; f <= o.customers; f += chunk)
        pure_call(http, "load_orders", format("{\"seed\":%" PRId64 ",\"w\":%d,\"d\":%d,\"customers\":%d,\"items\":%d,"
                                              "\"from\":%d,\"to\":%d,\"now\":1}",
                                              o.seed, w, d, o.customers, o.items, f, std::min(f + chunk, o.customers + 1)), body);
    }
  }
  std::fprintf(stderr, "pure: loaded %d warehouse(s) in %.1f s\n", o.warehouses,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

std::string pure_consistency(const Options& o) {
  Http http(o.host, o.port);
  std::string body;
  pure_call(http, "consistency", "{}", body);
  if (body == "{\"result\":\"ok\"}") return "ok";
  return body;
}

// Column order and names follow tpcc.pure: keys first, then fields (check mode compares them).
const char* const kSchema[][2] = {
    {"warehouse", "w_id INTEGER, name TEXT, street_1 TEXT, street_2 TEXT, city TEXT, state TEXT, zip TEXT, tax INTEGER,"
                  " ytd INTEGER, PRIMARY KEY (w_id)"},
    {"district", "w_id INTEGER, d_id INTEGER, name TEXT, street_1 TEXT, street_2 TEXT, city TEXT, state TEXT, zip TEXT,"
                 " tax INTEGER, ytd INTEGER, next_o_id INTEGER, PRIMARY KEY (w_id, d_id)"},
    {"customer", "w_id INTEGER, d_id INTEGER, c_id INTEGER, first TEXT, middle TEXT, last TEXT, street_1 TEXT,"
                 " street_2 TEXT, city TEXT, state TEXT, zip TEXT, phone TEXT, since INTEGER, credit TEXT,"
                 " credit_lim INTEGER, discount INTEGER, balance INTEGER, ytd_payment INTEGER, payment_cnt INTEGER,"
                 " delivery_cnt INTEGER, data TEXT, PRIMARY KEY (w_id, d_id, c_id)"},
    {"history", "c_id INTEGER, c_d_id INTEGER, c_w_id INTEGER, d_id INTEGER, w_id INTEGER, date INTEGER, amount INTEGER,"
                " data TEXT"},
    {"new_order", "w_id INTEGER, d_id INTEGER, o_id INTEGER, PRIMARY KEY (w_id, d_id, o_id)"},
    {"orders", "w_id INTEGER, d_id INTEGER, o_id INTEGER, c_id INTEGER, entry_d INTEGER, carrier_id INTEGER,"
               " ol_cnt INTEGER, all_local INTEGER, PRIMARY KEY (w_id, d_id, o_id)"},
    {"order_line", "w_id INTEGER, d_id INTEGER, o_id INTEGER, number INTEGER, i_id INTEGER, supply_w_id INTEGER,"
                   " delivery_d INTEGER, quantity INTEGER, amount INTEGER, dist_info TEXT,"
                   " PRIMARY KEY (w_id, d_id, o_id, number)"},
    {"item", "i_id INTEGER, im_id INTEGER, name TEXT, price INTEGER, data TEXT, PRIMARY KEY (i_id)"},
    {"stock", "w_id INTEGER, i_id INTEGER, quantity INTEGER, dist_01 TEXT, dist_02 TEXT, dist_03 TEXT, dist_04 TEXT,"
              " dist_05 TEXT, dist_06 TEXT, dist_07 TEXT, dist_08 TEXT, dist_09 TEXT, dist_10 TEXT, ytd INTEGER,"
              " order_cnt INTEGER, remote_cnt INTEGER, data TEXT, PRIMARY KEY (w_id, i_id)"},
};

void sqlite_create(Db& db, const Options& o) {
  for (auto& t : kSchema) {
    bool keyed = std::strcmp(t[0], "history") != 0;
    db.exec(format("CREATE TABLE %s (%s)%s", t[0], t[1], keyed && o.without_rowid ? " WITHOUT ROWID" : ""));
  }
  db.exec("CREATE INDEX customer_by_last ON customer (w_id, d_id, last, first, c_id)");
  db.exec("CREATE INDEX order_by_customer ON orders (w_id, d_id, c_id, o_id)");
}

void sqlite_load(const Options& o) {
  std::remove(o.db.c_str());
  std::remove((o.db + "-wal").c_str());
  std::remove((o.db + "-shm").c_str());
  std::remove((o.db + "-journal").c_str());
  auto t0 = std::chrono::steady_clock::now();
  Db db(o.db, o, true);
  sqlite_create(db, o);
  auto ins = [&](const char* table, int n) {
    std::string sql = format("INSERT INTO %s VALUES (", table);
    for (int i = 0; i < n; i++) sql += i ? ",?" : "?";
    return db.prepare(sql + ")");
  };
  sqlite3_stmt* item = ins("item", 5);
  sqlite3_stmt* wh = ins("warehouse", 9);
  sqlite3_stmt* dist = ins("district", 11);
  sqlite3_stmt* stock = ins("stock", 17);
  sqlite3_stmt* cust = ins("customer", 21);
  sqlite3_stmt* hist = ins("history", 8);
  sqlite3_stmt* ord = ins("orders", 8);
  sqlite3_stmt* no = ins("new_order", 3);
  sqlite3_stmt* ol = ins("order_line", 10);
  const int64_t now = 1;
  db.exec("BEGIN");
  for (int64_t i = 1; i <= o.items; i++) {
    int64_t rs = row_seed(o.seed, kItem, 0, 0, i);
    Q(item).i(i).i(rnd(rs, 0, 1, 10000)).t(astr(rs, 1, 14, 24)).i(rnd(rs, 3, 100, 10000)).t(data_text(rs, 4, 26, 50)).done();
  }
  for (int64_t w = 1; w <= o.warehouses; w++) {
    int64_t rs = row_seed(o.seed, kWarehouse, w, 0, 0);
    Q(wh).i(w).t(astr(rs, 0, 6, 10)).t(astr(rs, 2, 10, 20)).t(astr(rs, 4, 10, 20)).t(astr(rs, 6, 10, 20))
        .t(astr(rs, 8, 2, 2)).t(zip(rs, 10)).i(rnd(rs, 11, 0, 2000)).i(30000000).done();
    for (int64_t d = 1; d <= 10; d++) {
      int64_t ds = row_seed(o.seed, kDistrict, w, d, 0);
      Q(dist).i(w).i(d).t(astr(ds, 0, 6, 10)).t(astr(ds, 2, 10, 20)).t(astr(ds, 4, 10, 20)).t(astr(ds, 6, 10, 20))
          .t(astr(ds, 8, 2, 2)).t(zip(ds, 10)).i(rnd(ds, 11, 0, 2000)).i(3000000).i(o.customers + 1).done();
    }
    for (int64_t i = 1; i <= o.items; i++) {
      int64_t rs2 = row_seed(o.seed, kStock, w, 0, i);
      Q q(stock);
      q.i(w).i(i).i(rnd(rs2, 0, 10, 100));
      for (int k = 0; k < 10; k++) q.t(astr(rs2, 1 + 2 * k, 24, 24));
      q.i(0).i(0).i(0).t(data_text(rs2, 21, 26, 50)).done();
    }
    for (int64_t d = 1; d <= 10; d++) {
      for (int64_t c = 1; c <= o.customers; c++) {
        int64_t cs = row_seed(o.seed, kCustomer, w, d, c);
        std::string last = c > 1000 ? last_name(nurand(cs, 0, 255, 0, 999, kCLastLoad)) : last_name(c - 1);
        std::string credit = rnd(cs, 2, 1, 10) == 1 ? "BC" : "GC";
        Q(cust).i(w).i(d).i(c).t(astr(cs, 3, 8, 16)).t("OE").t(last).t(astr(cs, 5, 10, 20)).t(astr(cs, 7, 10, 20))
            .t(astr(cs, 9, 10, 20)).t(astr(cs, 11, 2, 2)).t(zip(cs, 13)).t(nstr(cs, 14, 16)).i(now).t(credit)
            .i(5000000).i(rnd(cs, 15, 0, 5000)).i(-1000).i(1000).i(1).i(0).t(astr(cs, 16, 300, 500)).done();
        int64_t hs = row_seed(o.seed, kHistory, w, d, c);
        Q(hist).i(c).i(d).i(w).i(d).i(w).i(now).i(1000).t(astr(hs, 0, 12, 24)).done();
      }
      std::vector<int64_t> perm;
      for (int64_t c = 1; c <= o.customers; c++) perm.push_back(c);
      int64_t ps = row_seed(o.seed, kPerm, w, d, 0);
      for (int64_t i = o.customers - 1; i > 0; i--) std::swap(perm[i], perm[rnd(ps, i, 0, i)]);
      int64_t delivered = int64_t{o.customers} * 7 / 10;
      for (int64_t oid = 1; oid <= o.customers; oid++) {
        int64_t rs3 = row_seed(o.seed, kOrder, w, d, oid);
        int64_t carrier = oid <= delivered ? rnd(rs3, 0, 1, 10) : 0;
        int64_t n = rnd(rs3, 1, 5, 15);
        Q(ord).i(w).i(d).i(oid).i(perm[oid - 1]).i(now).i(carrier).i(n).i(1).done();
        if (oid > delivered) Q(no).i(w).i(d).i(oid).done();
        for (int64_t l = 1; l <= n; l++) {
          int64_t ls = row_seed(o.seed, kLine, w, d, oid * 16 + l);
          int64_t amount = oid > delivered ? rnd(ls, 1, 1, 999999) : 0;
          Q(ol).i(w).i(d).i(oid).i(l).i(rnd(ls, 0, 1, o.items)).i(w).i(oid > delivered ? 0 : now).i(5).i(amount)
              .t(astr(ls, 2, 24, 24)).done();
        }
      }
    }
  }
  db.exec("COMMIT");
  db.exec("ANALYZE");
  std::fprintf(stderr, "sqlite: loaded %d warehouse(s) in %.1f s\n", o.warehouses,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

std::string sqlite_consistency(Db& db) {
  std::string out;
  auto check = [&](const char* what, const char* sql) {
    sqlite3_stmt* s = db.prepare(sql);
    Q q(s);
    while (q.row()) out += format("condition %s fails at warehouse %" PRId64 " district %" PRId64 "; ", what, q.col(0), q.col(1));
  };
  check("1", "SELECT w.w_id, 0 FROM warehouse w WHERE w.ytd != (SELECT SUM(ytd) FROM district d WHERE d.w_id=w.w_id)");
  check("2", "SELECT d.w_id, d.d_id FROM district d WHERE d.next_o_id - 1 != (SELECT MAX(o_id) FROM orders o WHERE o.w_id=d.w_id"
             " AND o.d_id=d.d_id) OR d.next_o_id - 1 != IFNULL((SELECT MAX(o_id) FROM new_order n WHERE n.w_id=d.w_id AND"
             " n.d_id=d.d_id), d.next_o_id - 1)");
  check("3", "SELECT w_id, d_id FROM new_order GROUP BY w_id, d_id HAVING MAX(o_id) - MIN(o_id) + 1 != COUNT(*)");
  check("4", "SELECT d.w_id, d.d_id FROM district d WHERE (SELECT SUM(ol_cnt) FROM orders o WHERE o.w_id=d.w_id AND"
             " o.d_id=d.d_id) != (SELECT COUNT(*) FROM order_line l WHERE l.w_id=d.w_id AND l.d_id=d.d_id)");
  return out.empty() ? "ok" : out;
}

// ---- check mode: a digest of every table, rows as pure-serve writes them ----

uint64_t fnv(uint64_t h, const std::string& s) {
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}
const char* const kTables[] = {"warehouse", "district", "customer", "history", "new_order", "orders", "order_line", "item", "stock"};
const char* const kOrderBy[] = {"1", "1, 2", "1, 2, 3", "rowid", "1, 2, 3", "1, 2, 3", "1, 2, 3, 4", "1", "1, 2"};

void sqlite_dump(const Options& o) {
  Db db(o.db, o, false);
  for (size_t ti = 0; ti < 9; ti++) {
    const char* t = kTables[ti];
    sqlite3_stmt* s = db.prepare(format("SELECT * FROM %s ORDER BY %s", t, kOrderBy[ti]));
    Q q(s);
    uint64_t h = 0xcbf29ce484222325ull;
    long rows = 0;
    int n = sqlite3_column_count(s);
    while (q.row()) {
      std::string row = "{";
      for (int c = 0; c < n; c++) {
        if (c) row += ',';
        row += '"';
        row += sqlite3_column_name(s, c);
        row += "\":";
        if (sqlite3_column_type(s, c) == SQLITE_TEXT) row += '"' + q.text(c) + '"';
        else row += std::to_string(q.col(c));
      }
      row += '}';
      if (std::getenv("TPCC_DUMP_ROWS")) std::printf("%s\n", row.c_str());
      h = fnv(h, row);
      rows++;
    }
    std::printf("%s %ld %016" PRIx64 "\n", t, rows, h);
  }
}

void pure_dump(const Options& o) {
  Http http(o.host, o.port);
  std::string body;
  for (const char* t : kTables) {
    uint64_t h = 0xcbf29ce484222325ull;
    long rows = 0;
    std::string after;
    while (true) {
      std::string path = format("/v1/tpcc/lists/%s?limit=1000", t);
      if (!after.empty()) path += "&after=" + after;
      int status = http.request("GET", path, "", body);
      if (status != 200) die("dump " + path + ": " + body);
      // rows are objects without braces inside (the texts are letters, digits and a few marks)
      size_t start = body.find("\"rows\":[");
      size_t end = body.find("],\"next\":");
      if (start == std::string::npos || end == std::string::npos) die("dump: unexpected page " + body.substr(0, 200));
      std::string rows_text = body.substr(start + 8, end - start - 8);
      for (size_t p = 0; p < rows_text.size();) {
        size_t e = rows_text.find('}', p);
        h = fnv(h, rows_text.substr(p, e + 1 - p));
        if (std::getenv("TPCC_DUMP_ROWS")) std::printf("%s\n", rows_text.substr(p, e + 1 - p).c_str());
        rows++;
        p = e + 2;
      }
      std::string next = body.substr(end + 9);
      next.pop_back();  // the closing brace
      if (next == "null") break;
      if (next.size() >= 2 && next.front() == '"') {  // a composite key comes as a JSON string
        std::string raw;
        for (size_t i = 1; i + 1 < next.size(); i++) {
          if (next[i] == '\\') i++;
          raw += next[i];
        }
        next = raw;
      }
      // percent-encode a composite key [1,2,3]
      after.clear();
      for (char c : next) {
        if (c == '[') after += "%5B"; else if (c == ']') after += "%5D"; else if (c == ',') after += "%2C";
        else if (c == '"') after += "%22"; else after += c;
      }
    }
    std::printf("%s %ld %016" PRIx64 "\n", t, rows, h);
  }
}


// ---- the bank queries (issue 10, section 5) ----

struct BankCheck { int64_t per_branch = 0, in_credit = 0, large = 0, ranks = 0; };

// Sums the integers that follow `"key":` in a JSON text.
int64_t sum_after(const std::string& body, const std::string& key) {
  int64_t sum = 0;
  std::string k = "\"" + key + "\":";
  for (size_t p = body.find(k); p != std::string::npos; p = body.find(k, p + 1)) sum += std::atoll(body.c_str() + p + k.size());
  return sum;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

int bank(const Options& o) {
  const int accounts = 100000, branches = 100, runs = o.transactions > 0 ? static_cast<int>(o.transactions) : 9;
  const int64_t threshold = 9000000;
  const char* const names[] = {"per_branch", "in_credit", "large", "ranks"};
  std::vector<double> ms[4];
  int64_t check[4] = {};
  auto timed = [&](int q, const std::function<int64_t()>& f) {
    auto t0 = std::chrono::steady_clock::now();
    int64_t c = f();
    ms[q].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    check[q] = c;
  };
  if (o.system == "pure") {
    Http http(o.host, o.port);
    std::string body;
    for (int f = 1; f <= accounts; f += 5000) {
      int status = http.request("POST", "/v1/bank/load_accounts",
                                format("{\"seed\":%" PRId64 ",\"from\":%d,\"to\":%d,\"branches\":%d}", o.seed, f,
                                       std::min(f + 5000, accounts + 1), branches), body);
      if (status != 200) die("load_accounts: " + body);
    }
    auto call = [&](const std::string& name, const std::string& payload) {
      if (http.request("POST", "/v1/bank/" + name, payload, body) != 200) die(name + ": " + body);
    };
    for (int r = 0; r < runs; r++) {
      timed(0, [&] { call("per_branch", "{}"); return sum_after(body, "total"); });
      timed(1, [&] { call("in_credit", "{}"); return std::atoll(body.c_str() + 10); });
      timed(2, [&] {
        call("large", format("{\"threshold\":%" PRId64 "}", threshold));
        return body.find("[]") != std::string::npos ? 0 : static_cast<int64_t>(std::count(body.begin(), body.end(), ',')) + 1;
      });
      timed(3, [&] { call("ranks", "{}"); return sum_after(body, "balance"); });
    }
  } else {
    std::remove(o.db.c_str());
    Db db(o.db, o, true);
    db.exec(std::string("CREATE TABLE accounts (id INTEGER PRIMARY KEY, branch INTEGER, balance INTEGER, owner TEXT)"));
    db.exec("BEGIN");
    sqlite3_stmt* ins = db.prepare("INSERT INTO accounts VALUES (?,?,?,?)");
    for (int64_t id = 1; id <= accounts; id++) {
      int64_t rs = row_seed(o.seed, 20, 0, 0, id);
      Q(ins).i(id).i(1 + id % branches).i(rnd(rs, 0, -100000, 10000000)).t(astr(rs, 1, 6, 12)).done();
    }
    db.exec("COMMIT");
    db.exec("ANALYZE");
    sqlite3_stmt* per_branch = db.prepare("SELECT branch, SUM(balance), COUNT(*) FROM accounts GROUP BY branch ORDER BY branch");
    sqlite3_stmt* in_credit = db.prepare("SELECT COUNT(*) FROM accounts WHERE balance > 0");
    sqlite3_stmt* large = db.prepare("SELECT id FROM accounts WHERE balance > ? ORDER BY id");
    sqlite3_stmt* ranks = db.prepare("SELECT id, balance FROM accounts ORDER BY balance DESC, id DESC LIMIT 100");
    for (int r = 0; r < runs; r++) {
      timed(0, [&] { Q q(per_branch); int64_t s = 0; while (q.row()) s += q.col(1); return s; });
      timed(1, [&] { Q q(in_credit); q.row(); return q.col(0); });
      timed(2, [&] { Q q(large); q.i(threshold); int64_t n = 0; while (q.row()) n++; return n; });
      timed(3, [&] { Q q(ranks); int64_t s = 0; while (q.row()) s += q.col(1); return s; });
    }
  }
  for (int q = 0; q < 4; q++)
    std::printf("{\"bench\":\"bank.%s\",\"system\":\"%s\",\"median_ms\":%.3f,\"runs\":%d,\"min_ms\":%.3f,\"check\":%" PRId64 "}\n",
                names[q], o.system.c_str(), median(ms[q]), runs, *std::min_element(ms[q].begin(), ms[q].end()), check[q]);
  return 0;
}

// ---- measurement ----

double cpu_seconds_self() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}
double cpu_seconds_pid(int pid) {
  std::ifstream in(format("/proc/%d/stat", pid));
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t p = all.rfind(')');
  if (p == std::string::npos) return 0;
  std::istringstream fields(all.substr(p + 2));
  std::string f;
  double ut = 0, st = 0;
  for (int i = 3; fields >> f; i++) {
    if (i == 14) ut = std::stod(f);
    if (i == 15) { st = std::stod(f); break; }
  }
  return (ut + st) / static_cast<double>(sysconf(_SC_CLK_TCK));
}
long long rss_bytes(int pid) {
  std::ifstream in(format("/proc/%d/status", pid));
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6) * 1024;
  return 0;
}
long long metric(const Options& o, const std::string& name) {
  Http http(o.host, o.port);
  std::string body;
  http.request("GET", "/metrics", "", body);
  std::string key = name + "{module=\"tpcc\"} ";
  size_t p = body.find(key);
  return p == std::string::npos ? -1 : std::atoll(body.c_str() + p + key.size());
}

struct Stats {
  std::vector<uint32_t> lat[kKinds];  // microseconds
  long ok[kKinds] = {}, rollbacks = 0, errors = 0;
  std::string first_error;
};

double pct(std::vector<uint32_t>& v, double p) {
  if (v.empty()) return 0;
  size_t k = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
  return v[k] / 1000.0;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) die("missing value after " + a);
      return argv[++i];
    };
    if (a == "--system") o.system = val();
    else if (a == "--host") o.host = val();
    else if (a == "--port") o.port = std::stoi(val());
    else if (a == "--server-pid") o.server_pid = std::stoi(val());
    else if (a == "--db") o.db = val();
    else if (a == "--load") o.load = true;
    else if (a == "--warehouses") o.warehouses = std::stoi(val());
    else if (a == "--items") o.items = std::stoi(val());
    else if (a == "--customers") o.customers = std::stoi(val());
    else if (a == "--terminals") o.terminals = std::stoi(val());
    else if (a == "--warmup") o.warmup = std::stod(val());
    else if (a == "--seconds") o.seconds = std::stod(val());
    else if (a == "--transactions") o.transactions = std::stol(val());
    else if (a == "--seed") o.seed = std::stoll(val());
    else if (a == "--label") o.label = val();
    else if (a == "--setting") o.setting = val();
    else if (a == "--journal") o.journal = val();
    else if (a == "--synchronous") o.synchronous = val();
    else if (a == "--locking") o.locking = val();
    else if (a == "--rowid") o.without_rowid = false;
    else if (a == "--shared") o.shared = true;
    else if (a == "--cache-kb") o.cache_kb = std::stol(val());
    else if (a == "--mmap") o.mmap_bytes = std::stoll(val());
    else if (a == "--dump") o.dump = true;
    else if (a == "--consistency") o.consistency_only = true;
    else if (a == "--bank") o.bank = true;
    else if (a == "--new-order-only") o.new_order_only = true;
    else if (a == "--no-consistency") o.skip_consistency = true;
    else if (a == "--sched") o.sched = val();
    else die("unknown option " + a);
  }
  if (o.sched != "normal" && o.sched != "batch") die("--sched normal or --sched batch");
  if (o.system != "pure" && o.system != "sqlite") die("--system pure or --system sqlite");
  if (o.system == "pure" && o.port == 0) die("--port is needed for pure");
  if (o.system == "sqlite" && o.db.empty()) die("--db is needed for sqlite");
  if (o.customers % 10 != 0 || o.customers < 30 || o.items < 100) die("--customers a multiple of 10 from 30, --items from 100");
  if (o.system == "sqlite" && o.locking == "exclusive" && !o.shared && o.terminals > 1)
    die("locking_mode=exclusive needs --shared with several terminals");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  bool pure = o.system == "pure";
  if (o.bank) return bank(o);
  if (o.load) {
    if (pure) pure_load(o); else sqlite_load(o);
  }
  if (o.dump) {
    if (pure) pure_dump(o); else sqlite_dump(o);
    return 0;
  }
  if (o.consistency_only) {
    std::string c = pure ? pure_consistency(o) : [&] { Db db(o.db, o, false); return sqlite_consistency(db); }();
    std::printf("consistency: %s\n", c.c_str());
    return c == "ok" ? 0 : 1;
  }

  std::unique_ptr<SharedSqlite> shared;
  if (!pure && o.shared) shared = std::make_unique<SharedSqlite>(o);
  std::vector<std::unique_ptr<Session>> sessions;
  for (int t = 0; t < o.terminals; t++) {
    if (pure) sessions.push_back(std::make_unique<PureSession>(o));
    else if (o.shared) sessions.push_back(std::make_unique<SharedSession>(*shared));
    else sessions.push_back(std::make_unique<SqliteSession>(o));
  }

  std::atomic<int> phase{o.transactions > 0 ? 1 : 0};  // 0 warm-up, 1 measuring, 2 stop
  std::atomic<int64_t> clock{1000};
  std::vector<Stats> stats(static_cast<size_t>(o.terminals));
  std::vector<std::thread> threads;
  for (int t = 0; t < o.terminals; t++) {
    threads.emplace_back([&, t] {
      if (o.sched == "batch") {
        sched_param none{};
        if (pthread_setschedparam(pthread_self(), SCHED_BATCH, &none) != 0) die("cannot set SCHED_BATCH");
      }
      Terminal term{1 + t % o.warehouses, 1 + (t / o.warehouses) % 10, mix(static_cast<uint64_t>(o.seed) * 1000003u + static_cast<uint64_t>(t))};
      Stats& st = stats[static_cast<size_t>(t)];
      Tx tx;
      std::string error;
      for (long n = 0;; n++) {
        int ph = phase.load(std::memory_order_relaxed);
        if (ph == 2 || (o.transactions > 0 && n >= o.transactions)) break;
        make_tx(term, o, clock.fetch_add(1, std::memory_order_relaxed), tx);
        auto t0 = std::chrono::steady_clock::now();
        Result r = sessions[static_cast<size_t>(t)]->run(tx, error);
        auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
        if (phase.load(std::memory_order_relaxed) != 1 || ph != 1) continue;
        if (r == Result::kError) {
          if (st.errors++ == 0) st.first_error = error;
          continue;
        }
        if (r == Result::kRollback) st.rollbacks++; else st.ok[tx.kind]++;
        st.lat[tx.kind].push_back(static_cast<uint32_t>(std::min<long long>(us, UINT32_MAX)));
      }
    });
  }
  double server0 = 0, self0 = 0;
  // What pure-serve's event log did over the measured interval (from /metrics): records, bursts
  // (group commits) and fdatasyncs, so a durable run shows that it synced.
  const char* const kLogMetrics[] = {"pure_log_records_total", "pure_log_bursts_total", "pure_fsync_seconds_count"};
  long long log0[3] = {}, log1[3] = {};
  auto read_log = [&](long long* out) {
    if (pure && o.server_pid)
      for (int i = 0; i < 3; i++) out[i] = metric(o, kLogMetrics[i]);
  };
  auto start = std::chrono::steady_clock::now();
  if (o.transactions == 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(o.warmup));
    server0 = pure && o.server_pid ? cpu_seconds_pid(o.server_pid) : 0;
    self0 = cpu_seconds_self();
    read_log(log0);
    start = std::chrono::steady_clock::now();
    phase = 1;
    std::this_thread::sleep_for(std::chrono::duration<double>(o.seconds));
    phase = 2;
  } else {
    server0 = pure && o.server_pid ? cpu_seconds_pid(o.server_pid) : 0;
    self0 = cpu_seconds_self();
    read_log(log0);
  }
  double server1 = 0, self1 = 0, wall = 0;
  if (o.transactions == 0) {
    wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    server1 = pure && o.server_pid ? cpu_seconds_pid(o.server_pid) : 0;
    self1 = cpu_seconds_self();
    read_log(log1);
  }
  for (auto& th : threads) th.join();
  if (o.transactions > 0) {
    wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    server1 = pure && o.server_pid ? cpu_seconds_pid(o.server_pid) : 0;
    self1 = cpu_seconds_self();
    read_log(log1);
  }

  Stats all;
  for (auto& st : stats) {
    for (int k = 0; k < kKinds; k++) {
      all.ok[k] += st.ok[k];
      all.lat[k].insert(all.lat[k].end(), st.lat[k].begin(), st.lat[k].end());
    }
    all.rollbacks += st.rollbacks;
    all.errors += st.errors;
    if (all.first_error.empty()) all.first_error = st.first_error;
  }
  long total = all.rollbacks;
  for (int k = 0; k < kKinds; k++) total += all.ok[k];
  sessions.clear();
  shared.reset();

  std::string consistency = o.skip_consistency ? std::string("skipped")
                            : pure ? pure_consistency(o) : [&] { Db db(o.db, o, false); return sqlite_consistency(db); }();
  std::string json = format("{\"bench\":\"tpcc\",\"system\":\"%s\",\"config\":\"%s\",\"setting\":\"%s\",\"warehouses\":%d,"
                            "\"terminals\":%d,\"seconds\":%.2f,\"runs\":1,\"transactions\":%ld,\"per_second\":%.0f,"
                            "\"new_orders_per_minute\":%.0f,\"rollbacks\":%ld,\"errors\":%ld,\"sched\":\"%s\"",
                            o.system.c_str(), o.label.c_str(), o.setting.c_str(), o.warehouses, o.terminals, wall, total,
                            total / wall, (all.ok[kNewOrder]) * 60.0 / wall, all.rollbacks, all.errors, o.sched.c_str());
  for (const char* which : {"p50_ms", "p99_ms"}) {
    json += format(",\"%s\":{", which);
    for (int k = 0; k < kKinds; k++)
      json += format("%s\"%s\":%.3f", k ? "," : "", kKindName[k], pct(all.lat[k], which[1] == '5' ? 0.5 : 0.99));
    json += "}";
  }
  double tx = total > 0 ? static_cast<double>(total) : 1;
  if (pure) {
    json += format(",\"server_cpu_us_per_tx\":%.1f,\"driver_cpu_us_per_tx\":%.1f", (server1 - server0) / tx * 1e6,
                   (self1 - self0) / tx * 1e6);
    if (o.server_pid) {
      long long rss = rss_bytes(o.server_pid), state = metric(o, "pure_state_bytes"), structure = metric(o, "pure_structure_bytes");
      json += format(",\"resident_mib\":%.1f,\"state_mib\":%.1f,\"structure_mib\":%.1f,\"resident_over_state\":%.2f",
                     rss / 1048576.0, state / 1048576.0, structure / 1048576.0, state > 0 ? static_cast<double>(rss) / state : 0.0);
      // the measured interval's metrics are read while the terminals still run, so the counts
      // cover about (not exactly) the transactions counted
      json += format(",\"log_records\":%lld,\"log_bursts\":%lld,\"fsyncs\":%lld", log1[0] - log0[0], log1[1] - log0[1],
                     log1[2] - log0[2]);
    }
  } else {
    // SQLite runs in this process: its CPU is the process's (the terminals' own work is small).
    json += format(",\"server_cpu_us_per_tx\":%.1f", (self1 - self0) / tx * 1e6);
    Db db(o.db, o, false);
    Q q(db.prepare("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()"));
    long long bytes = q.row() ? q.col(0) : 0;
    json += format(",\"resident_mib\":%.1f,\"db_mib\":%.1f,\"journal\":\"%s\",\"synchronous\":\"%s\",\"locking\":\"%s\","
                   "\"without_rowid\":%s,\"cache_kb\":%ld,\"mmap\":%lld,\"shared_connection\":%s",
                   rss_bytes(getpid()) / 1048576.0, bytes / 1048576.0, o.journal.c_str(), o.synchronous.c_str(), o.locking.c_str(),
                   o.without_rowid ? "true" : "false", o.cache_kb, o.mmap_bytes, o.shared ? "true" : "false");
  }
  std::string esc;
  for (char c : consistency) { if (c == '"' || c == '\\') esc += '\\'; esc += c; }
  json += format(",\"consistency\":\"%s\"", esc.substr(0, 1000).c_str());
  if (all.errors) {
    std::string e;
    for (char c : all.first_error.substr(0, 300)) { if (c == '"' || c == '\\') e += '\\'; e += c; }
    json += format(",\"first_error\":\"%s\"", e.c_str());
  }
  json += "}";
  std::printf("%s\n", json.c_str());
  std::fflush(stdout);
  return (consistency == "ok" || o.skip_consistency) && all.errors == 0 ? 0 : 1;
}
