// tests/host/test_owner.cpp — host::Owner over a Durability of the test's own (test_owner_durable.cpp:
// over open_durable): events run in arrival order on the owner thread, each
// a transaction; outcomes and snapshots are released only once the Durability says the batch is
// durable (visible = durable), in order; a poisoned log refuses events; close() answers all.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "frontend/frontend.h"
#include "tests/support/compile_module.h"
#include "host/owner.h"
#include "ir/ir.h"

using pure::host::EventReply;
using pure::vm::Value;

namespace {

std::unique_ptr<pure::vm::Program> compile(const std::string& text) {
  return pure::test::compile_module(text, "m.pure");
}

const char* const kCounter = R"(list hits by name: text { n: int = 0 }
event hit(name: text) { hits[name].n += 1 }
event bad(name: text) {
  hits[name].n += 100
  fail "no {name}"
}
event spin() { while true { } }
query count(name: text) -> int {
  let h = hits[name] else return 0
  return h.n
}
)";

// A log the test drives: it records appends and acknowledges or poisons when told.
class ManualLog final : public pure::host::Durability {
 public:
  explicit ManualLog(uint64_t start = 0) : start_(start), last_(start) {}
  void set_listener(pure::host::DurableListener l) override { listener_ = std::move(l); }
  uint64_t last_sequence() const override { return start_; }
  uint64_t append(std::span<const pure::host::CommittedEvent> events) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (poisoned_) return 0;
    last_ += events.size();
    appended_ += events.size();
    cv_.notify_all();
    return last_;
  }
  uint64_t append_version(uint32_t) override {  // one record, as the durable log's
    std::lock_guard<std::mutex> lock(mu_);
    if (poisoned_) return 0;
    ++appended_;
    cv_.notify_all();
    return ++last_;
  }
  std::string close() override {
    closed_ = true;
    return poisoned_ ? "poisoned" : "";
  }
  void ack_all() {
    uint64_t last;
    {
      std::lock_guard<std::mutex> lock(mu_);
      last = last_;
    }
    listener_(last, false, "");
  }
  void poison() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      poisoned_ = true;
    }
    listener_(0, true, "fsync failed: EIO");
  }
  void wait_appended(uint64_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    REQUIRE(cv_.wait_for(lock, std::chrono::seconds(10), [&] { return appended_ >= n; }));
  }
  const uint64_t start_;
  bool closed_ = false;

 private:
  pure::host::DurableListener listener_;
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t last_, appended_ = 0;
  bool poisoned_ = false;
};

// Collects replies from any thread.
struct Replies {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<int, EventReply>> got;  // (tag, reply) in the order delivered
  pure::host::EventDone make(int tag) {
    return [this, tag](EventReply r) {
      std::lock_guard<std::mutex> lock(mu);
      got.emplace_back(tag, std::move(r));
      cv.notify_all();
    };
  }
  void wait(size_t n) {
    std::unique_lock<std::mutex> lock(mu);
    REQUIRE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return got.size() >= n; }));
  }
  size_t size() {
    std::lock_guard<std::mutex> lock(mu);
    return got.size();
  }
};

uint32_t fn(const pure::vm::Program& p, const char* name) {
  int i = pure::vm::find_function(p, name);
  REQUIRE(i >= 0);
  return static_cast<uint32_t>(i);
}

int64_t count(const pure::host::Owner& o, const char* name) {
  std::vector<Value> args{Value::of_text(name)};
  pure::vm::CallResult r = o.query(fn(o.program(), "count"), args);
  REQUIRE(r.ok);
  return r.value.i;
}

}  // namespace

TEST_CASE("owner: events in arrival order, sequence numbers for committed ones, failures rolled back") {
  auto program = compile(kCounter);
  pure::host::Owner owner("m", *program, pure::rt::make_store(program->stored), pure::host::make_no_durability());
  Replies replies;
  owner.submit(fn(*program, "hit"), {Value::of_text("a")}, replies.make(0));
  owner.submit(fn(*program, "bad"), {Value::of_text("a")}, replies.make(1));
  owner.submit(fn(*program, "hit"), {Value::of_text("a")}, replies.make(2));
  replies.wait(3);
  REQUIRE(replies.got.size() == 3);
  CHECK(replies.got[0].first == 0);
  CHECK(replies.got[0].second.kind == EventReply::Kind::Committed);
  CHECK(replies.got[0].second.sequence == 1);
  CHECK(replies.got[1].second.kind == EventReply::Kind::Failed);
  CHECK(replies.got[1].second.reason == "no a");
  CHECK(replies.got[2].second.sequence == 2);
  CHECK(count(owner, "a") == 2);  // the failed event's +100 was rolled back
  CHECK(owner.stats().committed == 2);
  CHECK(owner.stats().failed == 1);
  CHECK(owner.stats().visible_sequence == 2);
}

TEST_CASE("owner: a runaway event is stopped by its step budget and the owner goes on") {
  auto program = compile(kCounter);
  pure::host::OwnerOptions options;
  options.max_steps = 10'000;
  pure::host::Owner owner("m", *program, pure::rt::make_store(program->stored), pure::host::make_no_durability(), options);
  Replies replies;
  owner.submit(fn(*program, "spin"), {}, replies.make(0));
  owner.submit(fn(*program, "hit"), {Value::of_text("x")}, replies.make(1));
  replies.wait(2);
  CHECK(replies.got[0].second.kind == EventReply::Kind::Failed);
  CHECK(replies.got[0].second.reason.find("step budget spent") != std::string::npos);
  CHECK(replies.got[1].second.kind == EventReply::Kind::Committed);
}

TEST_CASE("owner: visible = durable; a failed event's reply waits for the events before it") {
  auto program = compile(kCounter);
  auto log = std::make_unique<ManualLog>();
  ManualLog* lp = log.get();
  pure::host::Owner owner("m", *program, pure::rt::make_store(program->stored), std::move(log));
  Replies replies;
  owner.submit(fn(*program, "hit"), {Value::of_text("a")}, replies.make(0));
  lp->wait_appended(1);
  owner.submit(fn(*program, "bad"), {Value::of_text("a")}, replies.make(1));  // saw the hit
  // Give the owner time to run the failing event: its reply must still wait.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(replies.size() == 0);
  CHECK(count(owner, "a") == 0);  // applied, not durable: not visible
  CHECK(owner.stats().visible_sequence == 0);
  lp->ack_all();
  replies.wait(2);
  CHECK(replies.got[0].first == 0);
  CHECK(replies.got[0].second.kind == EventReply::Kind::Committed);
  CHECK(replies.got[1].first == 1);
  CHECK(replies.got[1].second.kind == EventReply::Kind::Failed);
  CHECK(count(owner, "a") == 1);
  CHECK(owner.stats().visible_sequence == 1);
}

TEST_CASE("owner: sequence numbers continue after the log's last sequence") {
  auto program = compile(kCounter);
  auto log = std::make_unique<ManualLog>(41);
  ManualLog* lp = log.get();
  pure::host::Owner owner("m", *program, pure::rt::make_store(program->stored), std::move(log));
  Replies replies;
  owner.submit(fn(*program, "hit"), {Value::of_text("a")}, replies.make(0));
  lp->wait_appended(1);
  lp->ack_all();
  replies.wait(1);
  CHECK(replies.got[0].second.sequence == 42);
}

TEST_CASE("owner: a poisoned log: pending events unacknowledged, later ones refused, queries see durable state") {
  auto program = compile(kCounter);
  auto log = std::make_unique<ManualLog>();
  ManualLog* lp = log.get();
  std::vector<std::string> reported;
  pure::host::OwnerOptions options;
  options.on_unhealthy = [&](const std::string& why) { reported.push_back(why); };
  pure::host::Owner owner("m", *program, pure::rt::make_store(program->stored), std::move(log), options);
  Replies replies;
  owner.submit(fn(*program, "hit"), {Value::of_text("a")}, replies.make(0));
  lp->wait_appended(1);
  lp->ack_all();
  replies.wait(1);
  owner.submit(fn(*program, "hit"), {Value::of_text("a")}, replies.make(1));
  lp->wait_appended(2);
  CHECK(owner.healthy());
  lp->poison();
  replies.wait(2);
  CHECK(replies.got[1].second.kind == EventReply::Kind::Unavailable);
  CHECK(replies.got[1].second.reason.find("fsync failed: EIO") != std::string::npos);
  CHECK(!owner.healthy());
  CHECK(owner.unhealthy_reason() == "fsync failed: EIO");
  CHECK(reported == std::vector<std::string>{"fsync failed: EIO"});
  owner.submit(fn(*program, "hit"), {Value::of_text("a")}, replies.make(2));
  replies.wait(3);
  CHECK(replies.got[2].second.kind == EventReply::Kind::Unavailable);
  CHECK(count(owner, "a") == 1);
}

TEST_CASE("owner: close runs what is queued and answers every caller; later events are refused") {
  auto program = compile(kCounter);
  pure::host::Owner owner("m", *program, pure::rt::make_store(program->stored), pure::host::make_no_durability());
  Replies replies;
  for (int i = 0; i < 1000; ++i) owner.submit(fn(*program, "hit"), {Value::of_text("a")}, replies.make(i));
  CHECK(owner.close() == "");
  CHECK(replies.size() == 1000);
  for (size_t i = 0; i < replies.got.size(); ++i) {
    CHECK(replies.got[i].first == static_cast<int>(i));
    CHECK(replies.got[i].second.sequence == i + 1);
  }
  CHECK(count(owner, "a") == 1000);
  owner.submit(fn(*program, "hit"), {Value::of_text("a")}, replies.make(-1));
  CHECK(replies.got.back().second.kind == EventReply::Kind::Unavailable);
}

TEST_CASE("owner: several threads submit to two modules while others query") {
  auto program = compile(kCounter);
  pure::host::Owner a("a", *program, pure::rt::make_store(program->stored), pure::host::make_no_durability());
  pure::host::Owner b("b", *program, pure::rt::make_store(program->stored), pure::host::make_no_durability());
  constexpr int kThreads = 4, kEach = 2000;
  std::atomic<int> acked{0};
  std::atomic<bool> done{false};
  std::atomic<int64_t> backwards{0};
  std::thread reader([&] {
    int64_t last = 0;
    while (!done.load()) {
      int64_t n = count(a, "k");
      if (n < last) ++backwards;
      last = n;
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i)
        (t % 2 ? b : a).submit(fn(*program, "hit"), {Value::of_text("k")}, [&](EventReply r) {
          if (r.kind == EventReply::Kind::Committed) ++acked;
        });
    });
  for (auto& t : threads) t.join();
  a.close();
  b.close();
  done = true;
  reader.join();
  CHECK(acked.load() == kThreads * kEach);
  CHECK(count(a, "k") + count(b, "k") == kThreads * kEach);
  CHECK(backwards.load() == 0);
}

TEST_CASE("owner: a hot upgrade runs between two batches, after its record is durable; waiting events and queries find "
          "their namesakes or fail") {
  auto v1 = compile(kCounter);
  // version 2: hit adds 10, bad is gone, count takes another parameter, total is new
  auto v2 = compile(R"(list hits by name: text { n: int = 0 }
event hit(name: text) { hits[name].n += 10 }
event spin() { while true { } }
query count(name: text, twice: bool) -> int {
  let h = hits[name] else return 0
  return h.n
}
query total() -> int {
  var t = 0
  for h in hits { t += h.n }
  return t
}
)");
  auto log = std::make_unique<ManualLog>();
  ManualLog* manual = log.get();
  pure::host::Owner owner("m", *v1, pure::rt::make_store(v1->stored), std::move(log));
  Replies replies;
  owner.submit(fn(*v1, "hit"), {Value::of_text("a")}, replies.make(0), {}, v1.get());
  manual->wait_appended(1);

  std::mutex mu;
  std::condition_variable cv;
  std::optional<pure::host::HotUpgradeDone> done;
  uint64_t prepared_at = 0;
  bool applied = false;
  pure::host::HotUpgrade u;
  u.program = v2.get();
  u.version = 2;
  u.prepare = [&](const pure::rt::Store&, uint64_t sequence) {
    prepared_at = sequence;
    return true;
  };
  u.apply = [&](std::unique_ptr<pure::rt::Store>*) {
    applied = true;
    return std::string();
  };
  owner.upgrade(std::move(u), [&](const pure::host::HotUpgradeDone& d) {
    std::lock_guard<std::mutex> lock(mu);
    done = d;
    cv.notify_all();
  });
  manual->wait_appended(2);  // the version record; the owner now waits for it to be durable
  CHECK(prepared_at == 2);
  CHECK_FALSE(applied);
  // sent meanwhile, decoded for version 1: hit runs as version 2's hit, bad has no namesake
  owner.submit(fn(*v1, "hit"), {Value::of_text("a")}, replies.make(1), {}, v1.get());
  owner.submit(fn(*v1, "bad"), {Value::of_text("a")}, replies.make(2), {}, v1.get());
  owner.submit(fn(*v2, "hit"), {Value::of_text("b")}, replies.make(3), {}, v2.get());
  CHECK(replies.size() == 0);
  manual->ack_all();  // event 1 and the version record durable
  {
    std::unique_lock<std::mutex> lock(mu);
    REQUIRE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return done.has_value(); }));
  }
  CHECK(done->applied);
  CHECK(done->sequence == 2);
  CHECK(applied);
  manual->wait_appended(4);
  manual->ack_all();
  replies.wait(4);
  std::map<int, EventReply> by_tag;
  for (auto& [tag, r] : replies.got) by_tag[tag] = r;
  CHECK(by_tag[0].kind == EventReply::Kind::Committed);
  CHECK((by_tag[0].sequence == 1 && by_tag[0].version == 1));
  CHECK(by_tag[1].kind == EventReply::Kind::Committed);
  CHECK((by_tag[1].sequence == 3 && by_tag[1].version == 2));
  CHECK(by_tag[2].kind == EventReply::Kind::Failed);
  CHECK(by_tag[2].version == 2);
  CHECK(by_tag[2].reason == "module m was upgraded to version 2 while event bad waited, and version 2 has no event bad (not run)");
  CHECK((by_tag[3].sequence == 4 && by_tag[3].version == 2));
  // queries: the visible state is version 2's; total is found by its own program, count decoded
  // for version 1 has no namesake of the same types
  CHECK(owner.program_at(owner.visible().second).second == 2);
  pure::vm::CallResult total = owner.query(fn(*v2, "total"), {}, nullptr, v2.get());
  REQUIRE(total.ok);
  CHECK(total.value.i == 21);  // 1 (version 1's hit) + 10 + 10
  std::vector<Value> args{Value::of_text("a")};
  pure::vm::CallResult old = owner.query(fn(*v1, "count"), args, nullptr, v1.get());
  CHECK_FALSE(old.ok);
  CHECK(old.reason.find("whose query count takes other parameters") != std::string::npos);
  owner.close();
}

TEST_CASE("owner: a hot upgrade whose prepare says no changes nothing") {
  auto v1 = compile(kCounter);
  auto v2 = compile(std::string(kCounter) + "query two() -> int { return 2 }\n");
  pure::host::Owner owner("m", *v1, pure::rt::make_store(v1->stored), pure::host::make_no_durability());
  Replies replies;
  std::promise<pure::host::HotUpgradeDone> promise;
  pure::host::HotUpgrade u;
  u.program = v2.get();
  u.version = 2;
  u.prepare = [](const pure::rt::Store&, uint64_t) { return false; };
  u.apply = [](std::unique_ptr<pure::rt::Store>*) { return std::string("never called"); };
  owner.upgrade(std::move(u), [&](const pure::host::HotUpgradeDone& d) { promise.set_value(d); });
  pure::host::HotUpgradeDone d = promise.get_future().get();
  CHECK_FALSE(d.applied);
  CHECK(d.error.empty());
  owner.submit(fn(*v1, "hit"), {Value::of_text("a")}, replies.make(0), {}, v1.get());
  replies.wait(1);
  CHECK((replies.got[0].second.sequence == 1 && replies.got[0].second.version == 1));
  CHECK(owner.program_at(1).first == v1.get());
}
