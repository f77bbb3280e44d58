// tests/host/test_idempotency.cpp — idempotency keys (docs/history.md#idempotency-keys): the
// key's rule; the table's window (the last N keys, within T); the record field (format version 3)
// round-trips and version 2 records still read; over open_durable, a retry is answered as the
// original (same sequence, same result, not applied again), other arguments or another event are
// refused naming the sequence, a failed event's key is not kept, twins in flight apply once, and
// the table is rebuilt from the retained log when the directory is opened again.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <future>

#include "fault_support.h"
#include "host/file_fault.h"
#include "host/idempotency.h"
#include "host/log_format.h"
#include "owner_support.h"

using namespace owner_test;
using host_test::dump;

namespace {

// An event with a result, so a replayed answer can be compared with the original.
const char* const kBank = R"(list accounts by id: int { balance: int = 0 }
event deposit(id: int, amount: int) -> int {
  if amount <= 0 { fail "amount must be positive" }
  accounts[id].balance += amount
  return accounts[id].balance
}
event withdraw(id: int, amount: int) -> int {
  accounts[id].balance -= amount
  return accounts[id].balance
}
query balance(id: int) -> int { return accounts[id].balance }
)";

Call deposit(const vm::Program& p, int64_t id, int64_t amount) {
  return {fn(p, "deposit"), {Value::of_int(id), Value::of_int(amount)}};
}

EventReply keyed(Owner& owner, Call c, std::string key) {
  auto promise = std::make_shared<std::promise<EventReply>>();
  std::future<EventReply> f = promise->get_future();
  owner.submit(c.fn, std::move(c.args), [promise](EventReply r) { promise->set_value(std::move(r)); }, std::move(key));
  return f.get();
}

int64_t balance(Owner& owner, const vm::Program& p, int64_t id) {
  Value arg = Value::of_int(id);
  vm::CallResult r = owner.query(fn(p, "balance"), std::span<const Value>(&arg, 1));
  REQUIRE(r.ok);
  return r.value.i;
}

}  // namespace

TEST_CASE("a key is 1 to 255 printable ASCII bytes without spaces; anything else says why") {
  CHECK(check_idempotency_key("order-1234/attempt:1") == "");
  CHECK(check_idempotency_key(std::string(limits::kIdempotencyKeyBytes, 'k')) == "");
  CHECK(check_idempotency_key("").find("is empty") == 0);
  CHECK(check_idempotency_key(std::string(limits::kIdempotencyKeyBytes + 1, 'k')).find("is 256 bytes long") == 0);
  CHECK(check_idempotency_key("a b") == "has byte 32 at offset 1; a key is printable ASCII without spaces ('!' to '~')");
  CHECK(check_idempotency_key("caf\xc3\xa9").find("has byte 195 at offset 3") == 0);
}

TEST_CASE("the table keeps the last N keys within the window, forgetting the oldest first") {
  IdempotencyTable t(3, 1000);
  for (uint64_t i = 1; i <= 4; ++i) t.remember("k" + std::to_string(i), KeyedEvent{0, i * 10, i, 100 + i, "r"}, 100 + i);
  CHECK(t.size() == 3);
  CHECK(t.find("k1", 105) == nullptr);  // the oldest, past the count
  REQUIRE(t.find("k4", 105) != nullptr);
  CHECK(t.find("k4", 105)->sequence == 4);
  CHECK(t.find("k2", 105)->args_hash == 20);
  // Past the window by age: not found, and forgotten at the next remember.
  CHECK(t.find("k2", 102 + 1000) != nullptr);
  CHECK(t.find("k2", 102 + 1001) == nullptr);
  t.remember("k5", KeyedEvent{0, 50, 5, 1104, "r"}, 1104);  // k2 and k3 are past 1000 ms by now
  CHECK(t.size() == 2);
  // A key aged out may be used again: the new use replaces it (and k4, 1001 ms old, goes).
  t.remember("k2", KeyedEvent{1, 60, 6, 1105, "r"}, 1105);
  REQUIRE(t.find("k2", 1105) != nullptr);
  CHECK(t.find("k2", 1105)->sequence == 6);
  CHECK(t.find("k4", 1105) == nullptr);
  CHECK(t.size() == 2);
}

TEST_CASE("record format 3 carries the key and result; format 2 records still read, without a key") {
  std::string seg;
  encode_record(seg, 7, 2, "ARGS", 1234, kLogVersion, "key-1", "RESULT");
  encode_record(seg, 8, 3, "MORE", 1235);
  DecodedRecord r;
  REQUIRE(decode_record(seg, 0, &r) == RecordCheck::Ok);
  CHECK(r.sequence == 7);
  CHECK(r.time_ms == 1234);
  CHECK(r.key == "key-1");
  CHECK(r.result == "RESULT");
  CHECK(r.args == "ARGS");
  CHECK(r.size == record_bytes(4, 5, 6));
  REQUIRE(decode_record(seg, r.size, &r) == RecordCheck::Ok);
  CHECK(r.key == "");
  CHECK(r.result == "");
  CHECK(r.args == "MORE");
  std::string v2;
  encode_record(v2, 9, 1, "OLD", 99, 2, "ignored", "ignored");
  REQUIRE(decode_record(v2, 0, &r, 2) == RecordCheck::Ok);
  CHECK(r.key == "");
  CHECK(r.args == "OLD");
  CHECK(r.time_ms == 99);
  // Every byte of a keyed record is covered: a flipped byte anywhere is caught.
  std::string one;
  encode_record(one, 1, 0, "A", 5, kLogVersion, "kk", "R");
  for (size_t i = 0; i < one.size(); ++i) {
    std::string bad = one;
    bad[i] ^= 0x40;
    CHECK(decode_record(bad, 0, &r) != RecordCheck::Ok);
  }
}

TEST_CASE("a retry gets the original answer and is not applied again; other arguments or events are refused") {
  auto p = compile(kBank);
  FaultFileSystem fs;
  Opened m;
  REQUIRE(open_owner(fs, "/data", *p, manual_checkpoints(), &m).ok());
  EventReply first = keyed(*m.owner, deposit(*p, 1, 50), "pay-1");
  REQUIRE(first.kind == EventReply::Kind::Committed);
  CHECK(!first.replayed);
  CHECK(first.value.i == 50);
  REQUIRE(call(*m.owner, deposit(*p, 1, 5)).kind == EventReply::Kind::Committed);  // no key: runs
  EventReply again = keyed(*m.owner, deposit(*p, 1, 50), "pay-1");
  REQUIRE(again.kind == EventReply::Kind::Committed);
  CHECK(again.replayed);
  CHECK(again.sequence == first.sequence);
  CHECK(again.value.i == 50);  // the original result, not the balance now
  CHECK(balance(*m.owner, *p, 1) == 55);
  EventReply other = keyed(*m.owner, deposit(*p, 1, 51), "pay-1");
  CHECK(other.kind == EventReply::Kind::KeyReused);
  CHECK(other.sequence == first.sequence);
  CHECK(other.reason == "Idempotency-Key 'pay-1' was already used, with other arguments, by the event committed as seq 1; "
                        "a retry must repeat the same event and arguments, a new request needs a new key");
  EventReply another = keyed(*m.owner, {fn(*p, "withdraw"), {Value::of_int(1), Value::of_int(50)}}, "pay-1");
  CHECK(another.kind == EventReply::Kind::KeyReused);
  CHECK(another.reason.find("with another event") != std::string::npos);
  CHECK(balance(*m.owner, *p, 1) == 55);
  // A failed event's key is not kept: the retry runs (and may succeed once the cause is gone).
  EventReply failed = keyed(*m.owner, deposit(*p, 2, 0), "pay-2");
  CHECK(failed.kind == EventReply::Kind::Failed);
  EventReply rerun = keyed(*m.owner, deposit(*p, 2, 0), "pay-2");
  CHECK(rerun.kind == EventReply::Kind::Failed);
  CHECK(!rerun.replayed);
  // each run an audit-only record of its own (no key in it)
  CHECK(failed.sequence > 0);
  CHECK(rerun.sequence == failed.sequence + 1);
  OwnerStats s = m.owner->stats();
  CHECK(s.replayed == 1);
  CHECK(s.key_reused == 2);
  CHECK(s.committed == 2);
  CHECK(s.durability.log.records == 4);  // the two committed events and the two failed ones' records
}

TEST_CASE("twins in flight: the same key submitted twice before either is answered applies once") {
  auto p = compile(kBank);
  FaultFileSystem fs;
  Opened m;
  REQUIRE(open_owner(fs, "/data", *p, manual_checkpoints(), &m).ok());
  for (int round = 0; round < 20; ++round) {
    std::string key = "twin-" + std::to_string(round);
    std::vector<std::future<EventReply>> replies;
    for (int i = 0; i < 3; ++i) {
      auto promise = std::make_shared<std::promise<EventReply>>();
      replies.push_back(promise->get_future());
      Call c = deposit(*p, 7, 10);
      m.owner->submit(c.fn, std::move(c.args), [promise](EventReply r) { promise->set_value(std::move(r)); }, key);
    }
    int ran = 0, replayed = 0;
    uint64_t seq = 0;
    for (auto& f : replies) {
      EventReply r = f.get();
      REQUIRE(r.kind == EventReply::Kind::Committed);
      (r.replayed ? replayed : ran)++;
      if (!seq) seq = r.sequence;
      CHECK(r.sequence == seq);
      CHECK(r.value.i == 10 * (round + 1));
    }
    CHECK(ran == 1);
    CHECK(replayed == 2);
  }
  CHECK(balance(*m.owner, *p, 7) == 200);
}

TEST_CASE("the keys survive a reopen: rebuilt from the retained log, also across a checkpoint") {
  auto p = compile(kBank);
  FaultFileSystem fs;
  uint64_t seq = 0;
  {
    Opened m;
    REQUIRE(open_owner(fs, "/data", *p, manual_checkpoints(), &m).ok());
    EventReply r = keyed(*m.owner, deposit(*p, 3, 30), "k-3");
    REQUIRE(r.kind == EventReply::Kind::Committed);
    seq = r.sequence;
    for (int i = 0; i < 5; ++i) REQUIRE(call(*m.owner, deposit(*p, 4, 1)).kind == EventReply::Kind::Committed);
    REQUIRE(m.log->checkpoint_now() == "");  // the keyed record is history now (kept: --retain 7d)
    REQUIRE(m.owner->close() == "");
  }
  Opened m;
  REQUIRE(open_owner(fs, "/data", *p, manual_checkpoints(), &m).ok());
  CHECK(m.log->recovery().checkpoint_sequence == 6);
  EventReply again = keyed(*m.owner, deposit(*p, 3, 30), "k-3");
  REQUIRE(again.kind == EventReply::Kind::Committed);
  CHECK(again.replayed);
  CHECK(again.sequence == seq);
  CHECK(again.value.i == 30);
  CHECK(keyed(*m.owner, deposit(*p, 3, 31), "k-3").kind == EventReply::Kind::KeyReused);
  CHECK(balance(*m.owner, *p, 3) == 30);
}

TEST_CASE("with --retain none a checkpoint forgets the keys it covers after a reopen (documented)") {
  auto p = compile(kBank);
  FaultFileSystem fs;
  DurableOptions o = manual_checkpoints();
  o.log.retain.keep_ms = 0;
  o.log.segment_bytes = 64;  // a segment a record or two: the keyed one's is sealed and retired
  {
    Opened m;
    REQUIRE(open_owner(fs, "/data", *p, o, &m).ok());
    REQUIRE(keyed(*m.owner, deposit(*p, 3, 30), "k-3").kind == EventReply::Kind::Committed);
    for (int i = 0; i < 3; ++i) REQUIRE(call(*m.owner, deposit(*p, 4, 1)).kind == EventReply::Kind::Committed);
    REQUIRE(m.log->checkpoint_now() == "");
    REQUIRE(m.owner->close() == "");
  }
  Opened m;
  REQUIRE(open_owner(fs, "/data", *p, o, &m).ok());
  EventReply r = keyed(*m.owner, deposit(*p, 3, 30), "k-3");
  REQUIRE(r.kind == EventReply::Kind::Committed);
  CHECK(!r.replayed);
  CHECK(balance(*m.owner, *p, 3) == 60);
}

namespace {

constexpr int kKeyed = 8;

DurableOptions small_segments() {
  DurableOptions o = manual_checkpoints();
  o.log.segment_bytes = 120;     // a roll every record or two
  o.checkpoint_log_bytes = 200;  // and checkpoints among them (history kept: --retain 7d)
  return o;
}

// Keyed event i deposits i into account i % 3 under key "key-i".
struct KeyedOutcome {
  int acknowledged = 0;
};

KeyedOutcome keyed_workload(FaultFileSystem& fs, const vm::Program& p) {
  KeyedOutcome out;
  Opened m;
  if (!open_owner(fs, "/data", p, small_segments(), &m).ok()) return out;
  for (int i = 1; i <= kKeyed; ++i) {
    EventReply r = keyed(*m.owner, deposit(p, i % 3, i), "key-" + std::to_string(i));
    if (r.kind != EventReply::Kind::Committed) break;
    out.acknowledged = i;
  }
  m.owner->close();
  return out;
}

}  // namespace

TEST_CASE("every fault point: an acknowledged keyed event is answered from the log after the crash, applied once") {
  auto p = compile(kBank);
  FaultFileSystem clean;
  REQUIRE(keyed_workload(clean, *p).acknowledged == kKeyed);
  const uint64_t points = clean.points() + 8;
  REQUIRE(points > 20);
  // the balance of account i % 3 right after keyed event i: its result
  std::vector<int64_t> result(kKeyed + 1), total(3);
  for (int i = 1; i <= kKeyed; ++i) result[i] = (total[i % 3] += i);
  const host_test::CrashMode crashes[] = {{0, false, 0}, {9, false, 1}};
  int runs = 0, replayed_unacknowledged = 0;
  host_test::at_every_fault(points, crashes, [&](FaultFileSystem& fs) { return keyed_workload(fs, *p); },
                            [&](FaultFileSystem& fs, const KeyedOutcome& outcome) {
    Opened m;
    Status s = open_owner(fs, "/data", *p, small_segments(), &m);
    REQUIRE_MESSAGE(s.ok(), s.error);
    const uint64_t k = m.log->recovery().last_sequence;
    CHECK(k >= uint64_t(outcome.acknowledged));
    REQUIRE(k <= uint64_t(kKeyed));
    // Every event retried with its key: those the log holds are answered as they were, the
    // rest run now; either way each is applied once.
    for (int i = 1; i <= kKeyed; ++i) {
      EventReply r = keyed(*m.owner, deposit(*p, i % 3, i), "key-" + std::to_string(i));
      REQUIRE(r.kind == EventReply::Kind::Committed);
      CHECK(r.replayed == (uint64_t(i) <= k));
      CHECK(r.sequence == uint64_t(i));
      CHECK(r.value.i == result[i]);
      if (r.replayed && i > outcome.acknowledged) ++replayed_unacknowledged;
    }
    for (int a = 0; a < 3; ++a) CHECK(balance(*m.owner, *p, a) == total[a]);
    ++runs;
  });
  MESSAGE(runs << " keyed crash runs over " << points << " fault points; " << replayed_unacknowledged
               << " retries of unacknowledged events answered from the log");
  CHECK(runs > 0);
}
