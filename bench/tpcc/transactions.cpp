// bench/tpcc/transactions.cpp: the terminals' transactions: each one's inputs (clauses 2.4.1 to
// 2.8.1, drawn from the terminal's own random stream), and its run against pure-serve (one call of
// tpcc.pure's *_tx events and queries over HTTP) or against SQLite (the same transaction in SQL with
// prepared statements; a rollback is a ROLLBACK statement).
#include "driver.h"

namespace tpcc {

void make_tx(Terminal& t, const Options& o, int64_t now, Tx& tx) {
  int64_t rs = t.next();
  int64_t x = o.new_order_only ? 0 : rnd(rs, 0, 0, 99);
  tx.w = t.w;
  tx.d = rnd(rs, 1, 1, 10);
  tx.now = now;
  int64_t W = o.warehouses;
  int64_t names = std::min(1000, o.customers);
  rs = t.next();
  if (x < 45) {
    tx.kind = kNewOrder;
    tx.c_id = nurand(rs, 2, 1023, 1, o.customers, kCId);
    int64_t n = rnd(rs, 0, 5, 15);
    tx.rollback = rnd(rs, 1, 1, 100) == 1;
    tx.lines.clear();
    for (int64_t l = 0; l < n; l++) {
      Line line;
      line.i_id = nurand(rs, 10 + 4 * l, 8191, 1, o.items, kOlIId);
      if (tx.rollback && l == n - 1) line.i_id = o.items + 1;
      line.supply_w_id = tx.w;
      if (W > 1 && rnd(rs, 12 + 4 * l, 1, 100) == 1) line.supply_w_id = 1 + (tx.w + rnd(rs, 13 + 4 * l, 0, W - 2)) % W;
      line.quantity = rnd(rs, 14 + 4 * l, 1, 10);
      tx.lines.push_back(line);
    }
  } else if (x < 88) {
    tx.kind = kPayment;
    tx.c_w = tx.w;
    tx.c_d = tx.d;
    if (W > 1 && rnd(rs, 0, 1, 100) <= 15) {
      tx.c_w = 1 + (tx.w + rnd(rs, 1, 0, W - 2)) % W;
      tx.c_d = rnd(rs, 2, 1, 10);
    }
    tx.by_name = rnd(rs, 3, 1, 100) <= 60;
    tx.amount = rnd(rs, 4, 100, 500000);
    tx.c_id = nurand(rs, 5, 1023, 1, o.customers, kCId);
    tx.last = last_name(nurand(rs, 7, 255, 0, names - 1, kCLastRun));
  } else if (x < 92) {
    tx.kind = kOrderStatus;
    tx.c_id = nurand(rs, 0, 1023, 1, o.customers, kCId);
    tx.last = last_name(nurand(rs, 2, 255, 0, names - 1, kCLastRun));
    tx.by_name = rnd(rs, 4, 1, 100) <= 60;
  } else if (x < 96) {
    tx.kind = kDelivery;
    tx.carrier = rnd(rs, 0, 1, 10);
  } else {
    tx.kind = kStockLevel;
    tx.d = t.d;
    tx.threshold = rnd(rs, 0, 10, 20);
  }
}

Result PureSession::run(const Tx& tx, std::string& error) {
  std::string& p = payload_;
  p.clear();
  const char* name = kKindName[tx.kind];
  switch (tx.kind) {
    case kNewOrder: {
      // the order lines as tpcc.pure's seq Line: a JSON array of rows, each the fields in order
      // (i_id, supply_w_id, quantity), the compact form of {"i_id":..,"supply_w_id":..,"quantity":..}
      put(p, "{\"w_id\":", tx.w, ",\"d_id\":", tx.d, ",\"c_id\":", tx.c_id, ",\"now\":", tx.now, ",\"ls\":[");
      for (size_t i = 0; i < tx.lines.size(); i++) {
        put(p, i ? ",[" : "[", tx.lines[i].i_id, ",", tx.lines[i].supply_w_id, ",", tx.lines[i].quantity, "]");
      }
      p += "]}";
      name = "new_order_tx";
      break;
    }
    case kPayment:
      put(p, "{\"w_id\":", tx.w, ",\"d_id\":", tx.d, ",\"c_w_id\":", tx.c_w, ",\"c_d_id\":", tx.c_d, ",\"c_id\":",
          tx.c_id, ",\"c_last\":\"", tx.last, "\",\"by_name\":", tx.by_name ? "true" : "false", ",\"amount\":",
          tx.amount, ",\"now\":", tx.now, "}");
      name = "payment_tx";
      break;
    case kOrderStatus:
      put(p, "{\"w_id\":", tx.w, ",\"d_id\":", tx.d, ",\"c_id\":", tx.c_id, ",\"c_last\":\"", tx.last,
          "\",\"by_name\":", tx.by_name ? "true" : "false", "}");
      break;
    case kDelivery:
      put(p, "{\"w_id\":", tx.w, ",\"carrier_id\":", tx.carrier, ",\"now\":", tx.now, "}");
      name = "delivery_tx";
      break;
    case kStockLevel:
      put(p, "{\"w_id\":", tx.w, ",\"d_id\":", tx.d, ",\"threshold\":", tx.threshold, "}");
      break;
    default: break;
  }
  path_.assign("/v1/tpcc/");
  path_ += name;
  int status = http_.request("POST", path_, p, body_);
  // New-Order answers its order id and total, Delivery the districts it skipped
  const char* result = tx.kind == kNewOrder ? "\"result\":{\"o_id\":" : tx.kind == kDelivery ? "\"result\":[" : nullptr;
  if (status == 200 && (!result || body_.find(result) != std::string::npos)) return Result::kOk;
  if (status == 409 && tx.kind == kNewOrder && tx.rollback && body_.find("Item number is not valid") != std::string::npos)
    return Result::kRollback;
  error = format("%s: HTTP %d %s", name, status, body_.c_str());
  return Result::kError;
}

int64_t sql_customer_by_name(SqlStatements& s, int64_t w, int64_t d, const std::string& last) {
  std::vector<int64_t> ids;
  Q q(s.c_by_name);
  q.i(w).i(d).t(last);
  while (q.row()) ids.push_back(q.col(0));
  return ids.empty() ? 0 : ids[(ids.size() - 1) / 2];
}

// Runs one transaction on a connection; a rollback is a ROLLBACK statement.
Result sql_run(SqlStatements& s, const Tx& tx, std::string& error) {
  bool writes = tx.kind == kNewOrder || tx.kind == kPayment || tx.kind == kDelivery;
  try {
    Q(writes ? s.begin_write : s.begin).done();
    switch (tx.kind) {
      case kNewOrder: {
        int64_t w_tax, d_tax, o_id, discount;
        { Q q(s.w_tax); q.i(tx.w); if (!q.row()) throw std::runtime_error("no warehouse"); w_tax = q.col(0); }
        { Q q(s.d_next); q.i(tx.w).i(tx.d); if (!q.row()) throw std::runtime_error("no district"); d_tax = q.col(0); o_id = q.col(1); }
        Q(s.d_bump).i(o_id + 1).i(tx.w).i(tx.d).done();
        { Q q(s.c_disc); q.i(tx.w).i(tx.d).i(tx.c_id); if (!q.row()) throw std::runtime_error("no customer"); discount = q.col(0); }
        int64_t all_local = 1;
        for (auto& l : tx.lines) if (l.supply_w_id != tx.w) all_local = 0;
        Q(s.o_ins).i(tx.w).i(tx.d).i(o_id).i(tx.c_id).i(tx.now).i(static_cast<int64_t>(tx.lines.size())).i(all_local).done();
        Q(s.no_ins).i(tx.w).i(tx.d).i(o_id).done();
        int64_t total = 0;
        for (size_t n = 0; n < tx.lines.size(); n++) {
          const Line& l = tx.lines[n];
          int64_t price;
          {
            Q q(s.i_get);
            q.i(l.i_id);
            if (!q.row()) {
              Q(s.rollback).done();
              return tx.rollback ? Result::kRollback : (error = "new_order: unexpected invalid item", Result::kError);
            }
            price = q.col(0);
          }
          int64_t quantity, ytd, order_cnt, remote_cnt;
          std::string dist;
          {
            Q q(s.s_get[tx.d]);
            q.i(l.supply_w_id).i(l.i_id);
            if (!q.row()) throw std::runtime_error("no stock");
            quantity = q.col(0);
            dist = q.text(1);
            ytd = q.col(3);
            order_cnt = q.col(4);
            remote_cnt = q.col(5);
          }
          int64_t qn = quantity - l.quantity + (quantity < l.quantity + 10 ? 91 : 0);
          Q(s.s_upd).i(qn).i(ytd + l.quantity).i(order_cnt + 1).i(remote_cnt + (l.supply_w_id != tx.w)).i(l.supply_w_id).i(l.i_id).done();
          int64_t amount = l.quantity * price;
          total += amount;
          Q(s.ol_ins).i(tx.w).i(tx.d).i(o_id).i(static_cast<int64_t>(n + 1)).i(l.i_id).i(l.supply_w_id).i(l.quantity).i(amount).t(dist).done();
        }
        total = total * (10000 - discount) / 10000 * (10000 + w_tax + d_tax) / 10000;
        (void)total;
        break;
      }
      case kPayment: {
        std::string w_name, d_name;
        { Q q(s.w_pay); q.i(tx.amount).i(tx.w); if (!q.row()) throw std::runtime_error("no warehouse"); w_name = q.text(0); q.done(); }
        { Q q(s.d_pay); q.i(tx.amount).i(tx.w).i(tx.d); if (!q.row()) throw std::runtime_error("no district"); d_name = q.text(0); q.done(); }
        int64_t id = tx.c_id;
        if (tx.by_name) {
          id = sql_customer_by_name(s, tx.c_w, tx.c_d, tx.last);
          if (id == 0) {
            Q(s.rollback).done();
            error = "payment: no customer named " + tx.last;
            return Result::kError;
          }
        }
        int64_t balance, ytd_payment, payment_cnt;
        std::string credit, data;
        {
          Q q(s.c_get);
          q.i(tx.c_w).i(tx.c_d).i(id);
          if (!q.row()) throw std::runtime_error("no customer");
          credit = q.text(10);
          balance = q.col(13);
          ytd_payment = q.col(14);
          payment_cnt = q.col(15);
          data = q.text(16);
        }
        if (credit == "BC") {
          data = format("%" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 "|", id, tx.c_d, tx.c_w,
                        tx.d, tx.w, tx.amount) + data;
          if (data.size() > 500) data.resize(500);
        }
        Q(s.c_pay).i(balance - tx.amount).i(ytd_payment + tx.amount).i(payment_cnt + 1).t(data).i(tx.c_w).i(tx.c_d).i(id).done();
        Q(s.h_ins).i(id).i(tx.c_d).i(tx.c_w).i(tx.d).i(tx.w).i(tx.now).i(tx.amount).t(w_name + "    " + d_name).done();
        break;
      }
      case kOrderStatus: {
        int64_t id = tx.c_id;
        if (tx.by_name) id = sql_customer_by_name(s, tx.w, tx.d, tx.last);
        if (id != 0) {
          { Q q(s.c_status); q.i(tx.w).i(tx.d).i(id); if (!q.row()) throw std::runtime_error("no customer"); }
          int64_t o_id = 0;
          { Q q(s.o_last); q.i(tx.w).i(tx.d).i(id); if (q.row()) o_id = q.col(0); }
          if (o_id) {
            Q q(s.ol_get);
            q.i(tx.w).i(tx.d).i(o_id);
            int64_t sum = 0;
            while (q.row()) sum += q.col(3);
            (void)sum;
          }
        }
        break;
      }
      case kDelivery: {
        for (int64_t d = 1; d <= 10; d++) {
          int64_t o_id = 0;
          { Q q(s.no_first); q.i(tx.w).i(d); if (q.row()) o_id = q.col(0); }
          if (!o_id) continue;
          Q(s.no_del).i(tx.w).i(d).i(o_id).done();
          int64_t c_id;
          { Q q(s.o_carrier); q.i(tx.carrier).i(tx.w).i(d).i(o_id); if (!q.row()) throw std::runtime_error("no order"); c_id = q.col(0); q.done(); }
          int64_t total = 0;
          { Q q(s.ol_deliver); q.i(tx.now).i(tx.w).i(d).i(o_id); while (q.row()) total += q.col(0); }
          Q(s.c_deliver).i(total).i(tx.w).i(d).i(c_id).done();
        }
        break;
      }
      case kStockLevel: {
        int64_t next;
        { Q q(s.d_next_only); q.i(tx.w).i(tx.d); if (!q.row()) throw std::runtime_error("no district"); next = q.col(0); }
        Q q(s.stock_low);
        q.i(tx.w).i(tx.d).i(next - 20).i(next).i(tx.threshold);
        if (!q.row()) throw std::runtime_error("no count");
        break;
      }
      default: break;
    }
    Q(s.commit).done();
    return Result::kOk;
  } catch (const std::exception& e) {
    error = std::string(kKindName[tx.kind]) + ": " + e.what();
    sqlite3_exec(sqlite3_db_handle(s.commit), "ROLLBACK", nullptr, nullptr, nullptr);
    return Result::kError;
  }
}

}  // namespace tpcc
