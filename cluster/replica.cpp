// cluster/replica.cpp — a module's replica on NATS JetStream (cluster.h, docs/cluster.md): the
// stream and lease bucket, the leader's publishing Durability, the follower's ordered consumer
// and the lease. The only file that includes libnats.
#include <nats/nats.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

#include "base/assert.h"
#include "base/limits.h"
#include "cluster/cluster.h"

namespace pure::cluster {

using base::Status;
using Clock = std::chrono::steady_clock;

const char* role_name(Role role) {
  switch (role) {
    case Role::Follower: return "follower";
    case Role::Leader: return "leader";
    case Role::Stopped: return "stopped";
  }
  return "?";
}

std::string parse_servers(std::string_view text, std::vector<std::string>* out) {
  out->clear();
  size_t at = 0;
  while (at <= text.size()) {
    size_t comma = text.find(',', at);
    std::string_view one = text.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
    if (one.substr(0, 7) != "nats://" || one.size() == 7)
      return "expected nats://HOST:PORT[,nats://HOST:PORT...], got '" + std::string(one) + "'";
    size_t colon = one.rfind(':');
    if (colon <= 6 || colon + 1 == one.size() ||
        one.substr(colon + 1).find_first_not_of("0123456789") != std::string_view::npos)
      return "'" + std::string(one) + "' names no port: expected nats://HOST:PORT";
    out->emplace_back(one);
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  return "";
}

namespace {

// The library's global state: opened with the first replica, closed after the last.
std::mutex library_mu;
int library_users = 0;

std::string nats_error(natsStatus s, jsErrCode code = static_cast<jsErrCode>(0)) {
  std::string m = natsStatus_GetText(s);
  if (code != 0) m += " (JetStream error " + std::to_string(static_cast<int>(code)) + ")";
  const char* last = nats_GetLastError(nullptr);
  if (last && *last && m.find(last) == std::string::npos) m += ": " + std::string(last);
  return m;
}

int64_t now_ns() { return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count(); }

uint64_t wall_ms() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

std::string hex(uint64_t v) {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

class ReplicaImpl;

// The owner's Durability over the module's own log (see Replica::wrap).
class ReplicatedLog : public host::Durability {
 public:
  ReplicatedLog(ReplicaImpl& replica, std::unique_ptr<host::Durability> local)
      : replica_(replica), local_(std::move(local)) {}
  void set_listener(host::DurableListener listener) override {
    listener_ = listener;
    local_->set_listener(std::move(listener));
  }
  uint64_t last_sequence() const override { return local_->last_sequence(); }
  void take_keys(host::IdempotencyTable* out) override { local_->take_keys(out); }
  uint64_t append(std::span<const host::CommittedEvent> events) override;
  std::string close() override { return local_->close(); }
  void published(const std::shared_ptr<const rt::Snapshot>& snapshot, uint64_t sequence) override {
    local_->published(snapshot, sequence);
  }
  host::DurabilityStats stats() const override { return local_->stats(); }

 private:
  ReplicaImpl& replica_;
  std::unique_ptr<host::Durability> local_;
  host::DurableListener listener_;
};

class ReplicaImpl : public Replica {
 public:
  ReplicaImpl(ClusterOptions options, std::string module, uint64_t identity, OnStop on_stop)
      : options_(std::move(options)),
        module_(std::move(module)),
        identity_(identity),
        on_stop_(std::move(on_stop)),
        stream_("PURE_" + module_),
        subject_("pure." + module_ + ".log"),
        bucket_("PURE_LEASE_" + module_),
        ckpt_stream_("PURE_CKPT_" + module_),
        ckpt_subject_("pure." + module_ + ".ckpt"),
        lease_value_(options_.node + " " + options_.advertise) {}

  ~ReplicaImpl() override {
    stop();
    std::thread publisher;
    {
      std::lock_guard<std::mutex> lock(publish_mu_);
      publish_quit_ = true;  // no publisher starts after this (publish_checkpoint checks it)
      publisher = std::move(publisher_);
    }
    publish_cv_.notify_all();
    if (publisher.joinable()) publisher.join();  // at most the request in flight: it stops between requests
    if (sub_) natsSubscription_Destroy(sub_);
    if (kv_) kvStore_Destroy(kv_);
    if (js_) jsCtx_Destroy(js_);
    if (nc_) natsConnection_Destroy(nc_);
    std::lock_guard<std::mutex> lock(library_mu);
    // Waits for the library's threads to end (bounded): nothing of it outlives the last replica.
    if (--library_users == 0) nats_CloseAndWait(static_cast<int64_t>(limits::kClusterRequestMs));
  }

  Status connect() {
    {
      std::lock_guard<std::mutex> lock(library_mu);
      if (library_users++ == 0) {
        if (natsStatus s = nats_Open(-1); s != NATS_OK) return Status::failure("cannot start the NATS client: " + nats_error(s));
      }
    }
    natsOptions* opts = nullptr;
    std::vector<const char*> servers;
    for (const std::string& s : options_.servers) servers.push_back(s.c_str());
    natsStatus s = natsOptions_Create(&opts);
    if (s == NATS_OK) s = natsOptions_SetServers(opts, servers.data(), static_cast<int>(servers.size()));
    if (s == NATS_OK) s = natsOptions_SetName(opts, ("pure-serve " + options_.node + " " + module_).c_str());
    if (s == NATS_OK) s = natsOptions_SetMaxReconnect(opts, -1);  // a NATS node down: the others are tried forever
    if (s == NATS_OK) s = natsOptions_SetReconnectWait(opts, 100);
    if (s == NATS_OK) s = natsOptions_SetTimeout(opts, 2000);
    if (s == NATS_OK) s = natsConnection_Connect(&nc_, opts);
    natsOptions_Destroy(opts);
    if (s != NATS_OK) return Status::failure("cannot connect to the NATS cluster (" + join_servers() + "): " + nats_error(s));
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = static_cast<int64_t>(limits::kClusterRequestMs);
    if ((s = natsConnection_JetStream(&js_, nc_, &jo)) != NATS_OK) return Status::failure("JetStream: " + nats_error(s));
    // The stream and the bucket: made by the first node, found by the others. A cluster just
    // started may still be electing its JetStream leader: retried for a bounded time.
    std::string last;
    for (auto until = Clock::now() + std::chrono::milliseconds(limits::kClusterStartMs); Clock::now() < until;
         std::this_thread::sleep_for(std::chrono::milliseconds(200))) {
      last = make_stream_and_bucket();
      if (last.empty()) return Status::success();
    }
    return Status::failure(last + " (for " + std::to_string(limits::kClusterStartMs / 1000) + " s)");
  }

  std::unique_ptr<host::Durability> wrap(std::unique_ptr<host::Durability> local) override {
    return std::make_unique<ReplicatedLog>(*this, std::move(local));
  }

  // Also a rejoin's (after stop() and the old owner's close): everything the replica thread and
  // the follower's checks keep starts afresh from the new owner, whose state is the local log's.
  void start(host::Owner* owner) override {
    PURE_ASSERT(!thread_.joinable());
    {
      std::lock_guard<std::mutex> lock(mu_);  // status() reads the owner under it: the old one
      owner_ = owner;                          // outlives this call (its rejoin holds it)
    }
    submitted_ = owner->visible().second;  // the local log's events: the stream's first ones
    stream_events_ = submitted_;
    stream_messages_ = 0;
    read_from_ = 0;
    behind_ = false;
    seen_any_ = false;
    {
      std::lock_guard<std::mutex> lock(pending_mu_);
      pending_.clear();
    }
    {
      std::lock_guard<std::mutex> lock(stop_mu_);
      stop_ = false;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (role_.load() == Role::Stopped && !failure_.empty()) ++rejoins_;
      failure_.clear();
      leader_.clear();
      leader_url_.clear();
      role_.store(Role::Follower, std::memory_order_release);
    }
    thread_ = std::thread([this] { run(); });
  }

  void stop() override {
    {
      std::lock_guard<std::mutex> lock(stop_mu_);
      stop_ = true;
    }
    stop_cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    if (sub_) {  // the replica thread's, gone with it: a rejoin subscribes afresh
      natsSubscription_Unsubscribe(sub_);
      natsSubscription_Destroy(sub_);
      sub_ = nullptr;
    }
  }

  std::string release() override {
    PURE_ASSERT(!thread_.joinable());  // after stop(): lease_rev_ is no other thread's
    if (lease_rev_ == 0) return "not held";
    uint64_t rev = 0;
    natsStatus s = kvStore_Update(&rev, kv_, "leader", "", 0, lease_rev_);
    lease_rev_ = 0;
    lease_deadline_ns_ = 0;  // no publish after this, even by an owner not yet closed
    if (s != NATS_OK) return "not released (" + nats_error(s) + "): another node holds it, or NATS did not answer";
    return "released";
  }


  void publish_checkpoint(const std::string& path, uint64_t through, PublishReport report) override {
    if (!leading()) return;
    {
      std::lock_guard<std::mutex> lock(publish_mu_);
      if (publish_quit_) return;
      publish_next_ = PublishJob{path, through, std::move(report)};  // a newer checkpoint replaces one not yet sent
      if (!publisher_.joinable()) publisher_ = std::thread([this] { run_publisher(); });
    }
    publish_cv_.notify_one();
  }

  // Leading with a fresh lease: a checkpoint may be published (checked again before each request).
  bool leading() const {
    return role_.load(std::memory_order_acquire) == Role::Leader && now_ns() < lease_deadline_ns_.load();
  }

  // The publisher thread: one checkpoint at a time, the newest handed over; off the checkpoint
  // thread, so closing an owner (a rejoin, a shutdown) never waits for NATS.
  void run_publisher() {
    std::unique_lock<std::mutex> lock(publish_mu_);
    for (;;) {
      publish_cv_.wait(lock, [&] { return publish_quit_ || publish_next_.through != 0; });
      if (publish_quit_) return;
      PublishJob job = std::move(publish_next_);
      publish_next_ = PublishJob{};
      lock.unlock();
      std::string why = publish_now(job.path, job.through);
      if (!why.empty() && job.report) job.report(why);
      lock.lock();
    }
  }

  std::string publish_now(const std::string& path, uint64_t through) {
    if (!leading()) return "";
    std::string bytes;
    if (Status st = host::read_checkpoint_bytes(host::posix_file_system(), path, &bytes); !st.ok())
      return "cannot read checkpoint " + std::to_string(through) + ": " + st.error;
    if (bytes.size() > kClusterCheckpointMaxBytes)
      return "checkpoint " + std::to_string(through) + " has " + std::to_string(bytes.size()) +
             " bytes, more than a published checkpoint may have (" + std::to_string(kClusterCheckpointMaxBytes) +
             "): not published; new nodes read the stream";
    const uint64_t chunks = std::max<uint64_t>(1, (bytes.size() + kClusterCheckpointChunk - 1) / kClusterCheckpointChunk);
    const std::string crc = std::to_string(host::transfer_checksum(bytes));
    jsStreamInfo* si = nullptr;
    if (natsStatus s = js_GetStreamInfo(&si, js_, ckpt_stream_.c_str(), nullptr, nullptr); s != NATS_OK)
      return "checkpoint " + std::to_string(through) + " not published: " + nats_error(s);
    uint64_t expected = si->State.LastSeq;
    jsStreamInfo_Destroy(si);
    // Each chunk names the message it follows: two publishers (a deposed leader and its successor)
    // cannot interleave chunks; a run cut short is skipped by readers (it has no last chunk).
    for (uint64_t i = 0; i < chunks; ++i) {
      if (!leading()) return "";  // stopped leading meanwhile: a cut-short run, skipped by readers
      const size_t at = i * kClusterCheckpointChunk;
      const size_t n = std::min(kClusterCheckpointChunk, bytes.size() - at);
      natsMsg* msg = nullptr;
      natsStatus s = natsMsg_Create(&msg, ckpt_subject_.c_str(), nullptr, bytes.data() + at, static_cast<int>(n));
      auto header = [&](const char* name, const std::string& value) {
        if (s == NATS_OK) s = natsMsgHeader_Set(msg, name, value.c_str());
      };
      header("Nats-Expected-Last-Sequence", std::to_string(expected));
      header("Pure-Module", hex(identity_));
      header("Pure-Through", std::to_string(through));
      header("Pure-Chunk", std::to_string(i));
      header("Pure-Chunks", std::to_string(chunks));
      header("Pure-Bytes", std::to_string(bytes.size()));
      header("Pure-Crc32c", crc);
      jsPubAck* ack = nullptr;
      jsErrCode code = static_cast<jsErrCode>(0);
      if (s == NATS_OK) s = js_PublishMsg(&ack, js_, msg, nullptr, &code);
      natsMsg_Destroy(msg);
      if (s != NATS_OK)
        return "checkpoint " + std::to_string(through) + " not published (chunk " + std::to_string(i) + " of " +
               std::to_string(chunks) + "): " + nats_error(s, code);
      expected = ack->Sequence;
      jsPubAck_Destroy(ack);
    }
    ++published_;
    return leading() ? trim() : "";
  }

  Status fetch_checkpoint(uint64_t local_last, std::string* bytes, uint64_t* through) override {
    *through = 0;
    std::string last_error = "NATS did not answer";
    for (int attempt = 0; attempt < kClusterFetchTries; ++attempt) {
      if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
      std::vector<Published> newest;
      if (!published_checkpoints(1, &newest)) continue;
      if (newest.empty() || newest[0].through <= local_last) return Status::success();  // none newer than the log
      if (local_last != 0) {  // a node with a log reads the stream after it while the stream holds it
        bool holds = false;
        if (!stream_holds(local_last + 1, &holds)) continue;
        if (holds) return Status::success();
      }
      if (std::string e = read_checkpoint_chunks(newest[0], bytes); !e.empty()) {
        last_error = e;  // trimmed or replaced meanwhile: look again
        continue;
      }
      *through = newest[0].through;
      installed_ = *through;
      return Status::success();
    }
    return Status::failure("no whole checkpoint could be read from " + ckpt_stream_ + " in " +
                           std::to_string(kClusterFetchTries) + " tries: " + last_error);
  }

  bool leader() const override { return role_.load(std::memory_order_acquire) == Role::Leader; }
  bool behind() const override { return behind_.load(); }

  ReplicaStatus status() const override {
    ReplicaStatus s;
    s.role = role_.load(std::memory_order_acquire);
    {
      std::lock_guard<std::mutex> lock(mu_);
      s.applied = owner_ ? owner_->visible().second : 0;
    }
    s.stream_events = stream_events_.load();
    s.stream_messages = stream_messages_.load();
    s.lag = s.stream_events > s.applied ? s.stream_events - s.applied : 0;
    s.failovers = failovers_.load();
    s.rejoins = rejoins_.load();
    s.read_from = read_from_.load();
    s.installed = installed_.load();
    s.published = published_.load();
    s.trimmed_below = trimmed_below_.load();
    std::lock_guard<std::mutex> lock(mu_);
    s.leader = leader_;
    s.leader_url = leader_url_;
    s.failure = failure_;
    return s;
  }

  // ReplicatedLog::append, on the owner thread.
  uint64_t append(host::Durability& local, const host::DurableListener& listener,
                  std::span<const host::CommittedEvent> events) {
    auto refuse = [&](const std::string& why, bool rejoin = true) -> uint64_t {
      stop_for(why, rejoin);
      if (listener) listener(0, true, "cluster: " + why);  // the owner's reason; then append's 0 poisons it
      return 0;
    };
    Role role = role_.load(std::memory_order_acquire);
    if (role == Role::Stopped) return refuse(failure());
    if (role == Role::Follower) {
      // Only the stream's records reach a follower's owner, in order: each must be the next one
      // the consumer submitted (an event from anywhere else would fork this node's log).
      std::lock_guard<std::mutex> lock(pending_mu_);
      for (const host::CommittedEvent& e : events) {
        if (pending_.empty() || pending_.front().event != e.fn || pending_.front().args != host::encode_values(e.args))
          return refuse("an event that is not the stream's next record reached the follower's log", false);
        pending_.pop_front();
      }
      return local.append(events);
    }
    // Leader: the lease must still be ours (renewed within two thirds of its time: a follower
    // takes it only after a whole lease without renewal), then the stream must take the burst
    // with the expected last sequence before the local log gets it.
    if (now_ns() >= lease_deadline_ns_.load())
      return refuse("the lease was not renewed in time (NATS unreachable?): this node stops leading");
    const uint64_t first = next_event_seq_;
    const uint64_t time = wall_ms();
    payload_.clear();
    for (size_t i = 0; i < events.size(); ++i) {
      std::string args = host::encode_values(events[i].args);
      host::append_shipped_record(payload_, host::ShippedRecord{first + i, events[i].fn, time, events[i].key,
                                                                events[i].result, args});
    }
    const uint64_t last = first + events.size() - 1;
    natsMsg* msg = nullptr;
    natsStatus s = natsMsg_Create(&msg, subject_.c_str(), nullptr, payload_.data(), static_cast<int>(payload_.size()));
    std::string expected = std::to_string(expected_stream_seq_);
    // Set even when 0 (an empty stream): the server checks the header whenever it is present.
    if (s == NATS_OK) s = natsMsgHeader_Set(msg, "Nats-Expected-Last-Sequence", expected.c_str());
    if (s == NATS_OK) s = natsMsgHeader_Set(msg, "Pure-Module", hex(identity_).c_str());
    if (s == NATS_OK) s = natsMsgHeader_Set(msg, "Pure-Last-Sequence", std::to_string(last).c_str());
    jsPubAck* ack = nullptr;
    jsErrCode code = static_cast<jsErrCode>(0);
    if (s == NATS_OK) {
      jsPubOptions po;
      jsPubOptions_Init(&po);
      po.MaxWait = static_cast<int64_t>(options_.lease_ms);
      s = js_PublishMsg(&ack, js_, msg, &po, &code);
    }
    natsMsg_Destroy(msg);
    if (s != NATS_OK) {
      std::string why = code == JSStreamWrongLastSequenceErr
                            ? "deposed: the stream has moved past message " + expected + " (another node leads)"
                            : "the stream did not take events " + std::to_string(first) + ".." + std::to_string(last) +
                                  ": " + nats_error(s, code);
      return refuse(why);
    }
    expected_stream_seq_ = ack->Sequence;
    jsPubAck_Destroy(ack);
    stream_messages_ = expected_stream_seq_;
    stream_events_ = last;
    next_event_seq_ = last + 1;
    uint64_t got = local.append(events);
    // The local log refused it (poisoned: a disk error): the owner stops, so must the leading;
    // a rejoin opens the directory again (or, if it cannot, the process exits 5).
    if (got == 0) stop_for("the local log refused events " + std::to_string(first) + ".." + std::to_string(last), true);
    if (got != 0 && got != last)
      return refuse("the local log numbered events " + std::to_string(got) + " where the stream has " + std::to_string(last),
                    false);
    return got;
  }

 private:
  std::string join_servers() const {
    std::string all;
    for (const std::string& s : options_.servers) all += (all.empty() ? "" : ",") + s;
    return all;
  }

  std::string make_stream_and_bucket() {
    jsStreamConfig sc;
    jsStreamConfig_Init(&sc);
    sc.Name = stream_.c_str();
    const char* subjects[1] = {subject_.c_str()};
    sc.Subjects = subjects;
    sc.SubjectsLen = 1;
    sc.Storage = js_FileStorage;
    sc.Replicas = options_.replicas;
    jsStreamInfo* si = nullptr;
    jsErrCode code = static_cast<jsErrCode>(0);
    natsStatus s = js_AddStream(&si, js_, &sc, nullptr, &code);
    if (s != NATS_OK) {  // it exists (with another configuration): use it as it is
      natsStatus g = js_GetStreamInfo(&si, js_, stream_.c_str(), nullptr, nullptr);
      if (g != NATS_OK) return "cannot make the stream " + stream_ + ": " + nats_error(s, code);
    }
    jsStreamInfo_Destroy(si);
    // The checkpoint stream: each published checkpoint is a run of chunk messages (docs/cluster.md).
    const char* ckpt_subjects[1] = {ckpt_subject_.c_str()};
    sc.Name = ckpt_stream_.c_str();
    sc.Subjects = ckpt_subjects;
    si = nullptr;
    s = js_AddStream(&si, js_, &sc, nullptr, &code);
    if (s != NATS_OK) {
      natsStatus g = js_GetStreamInfo(&si, js_, ckpt_stream_.c_str(), nullptr, nullptr);
      if (g != NATS_OK) return "cannot make the stream " + ckpt_stream_ + ": " + nats_error(s, code);
    }
    jsStreamInfo_Destroy(si);
    if (!kv_) {
      kvConfig kc;
      kvConfig_Init(&kc);
      kc.Bucket = bucket_.c_str();
      kc.History = 1;
      kc.Replicas = options_.replicas;
      kc.StorageType = js_FileStorage;
      s = js_CreateKeyValue(&kv_, js_, &kc);
      if (s != NATS_OK) s = js_KeyValue(&kv_, js_, bucket_.c_str());
      if (s != NATS_OK) return "cannot make the lease bucket " + bucket_ + ": " + nats_error(s);
    }
    return "";
  }

  std::string failure() const {
    std::lock_guard<std::mutex> lock(mu_);
    return failure_;
  }

  // Stops the replica (role Stopped: nothing more is published or submitted) and tells pure-serve
  // once, whether it can rejoin (it stopped leading) or not (divergence).
  void stop_for(const std::string& why, bool rejoin) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (role_.load() == Role::Stopped) return;
      failure_ = why;
      role_.store(Role::Stopped, std::memory_order_release);
    }
    if (on_stop_) on_stop_(why, rejoin);
  }
  void fatal(const std::string& why) { stop_for(why, false); }

  bool stopping() {
    std::lock_guard<std::mutex> lock(stop_mu_);
    return stop_;
  }

  // Waits up to ms (less when stopped); false when stopping.
  bool pause(uint64_t ms) {
    std::unique_lock<std::mutex> lock(stop_mu_);
    stop_cv_.wait_for(lock, std::chrono::milliseconds(ms), [&] { return stop_; });
    return !stop_;
  }

  void run() {
    jsSubOptions so;
    jsSubOptions_Init(&so);
    so.Stream = stream_.c_str();
    so.Ordered = true;  // in order, no gaps: the client recreates the consumer after a fault
    jsErrCode code = static_cast<jsErrCode>(0);
    natsStatus s = NATS_OK;
    while (!stopping()) {
      // From the first message this node's log does not hold: a restarted or rejoining node
      // reads only what it lacks, not the whole stream again.
      uint64_t first = 0;
      if (first_unapplied(submitted_, &first)) {
        so.Config.DeliverPolicy = js_DeliverByStartSequence;
        so.Config.OptStartSeq = first;
        stream_messages_ = first - 1;  // every message before it is in the log
        s = js_SubscribeSync(&sub_, js_, subject_.c_str(), nullptr, &so, &code);
        if (s == NATS_OK) {
          read_from_ = first;
          break;
        }
      }
      pause(200);
    }
    // The leader renews every third of a lease; a follower looks every tenth (a KV read), so a
    // lapse is seen within a tenth of a lease after it happens and a released lease at once.
    const uint64_t renew_ms = std::max<uint64_t>(options_.lease_ms / 3, 1);
    const uint64_t look_ms = std::max<uint64_t>(options_.lease_ms / 10, 1);
    auto next_tick = Clock::now();
    while (!stopping() && role_.load() != Role::Stopped) {
      if (role_.load() == Role::Follower && sub_) {
        natsMsg* msg = nullptr;
        s = natsSubscription_NextMsg(&msg, sub_, 50);
        if (s == NATS_OK) {
          apply(msg);
          natsMsg_Destroy(msg);
        } else if (s != NATS_TIMEOUT) {
          pause(50);  // the connection is moving to another NATS node: the client recovers
        }
      } else {
        pause(std::max<uint64_t>(1, std::chrono::duration_cast<std::chrono::milliseconds>(next_tick - Clock::now()).count()));
      }
      if (Clock::now() >= next_tick) {
        next_tick = Clock::now() + std::chrono::milliseconds(role_.load() == Role::Leader ? renew_ms : look_ms);
        if (role_.load() == Role::Leader) renew();
        else if (role_.load() == Role::Follower) watch_lease();
      }
    }
  }

  // One stream message: a burst of records, submitted to the owner in order.
  void apply(natsMsg* msg) {
    jsMsgMetaData* meta = nullptr;
    if (natsMsg_GetMetaData(&meta, msg) != NATS_OK) return fatal("a stream message without JetStream metadata");
    const uint64_t stream_seq = meta->Sequence.Stream;
    jsMsgMetaData_Destroy(meta);
    const char* module = nullptr;
    if (natsMsgHeader_Get(msg, "Pure-Module", &module) != NATS_OK || hex(identity_) != module)
      return fatal("stream message " + std::to_string(stream_seq) + " is of module " + (module ? module : "(none)") +
                   ", not this one (" + hex(identity_) + "): the nodes serve different code");
    std::string_view data(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg)));
    size_t offset = 0;
    while (offset < data.size()) {
      host::ShippedRecord r;
      if (std::string e = host::read_shipped_record(data, &offset, &r); !e.empty())
        return fatal("stream message " + std::to_string(stream_seq) + ": " + e);
      if (r.sequence > stream_events_) stream_events_ = r.sequence;
      if (r.sequence <= submitted_) continue;  // already in this node's log
      if (r.sequence != submitted_ + 1) {
        bool holds = true;
        if (r.sequence > submitted_ + 1 && stream_holds(submitted_ + 1, &holds) && !holds) {
          behind_ = true;
          return stop_for("behind the stream: it was trimmed past event " + std::to_string(submitted_ + 1) +
                              " (a node this far behind installs a published checkpoint)",
                          true);
        }
        return fatal("stream message " + std::to_string(stream_seq) + " holds event " + std::to_string(r.sequence) +
                     " where event " + std::to_string(submitted_ + 1) + " was next");
      }
      std::vector<vm::Value> args;
      if (Status st = host::decode_values(r.args, &args); !st.ok())
        return fatal("event " + std::to_string(r.sequence) + " from the stream: " + st.error);
      {
        std::lock_guard<std::mutex> lock(pending_mu_);
        pending_.push_back(Pending{r.sequence, r.event, std::string(r.args)});
      }
      const uint64_t seq = r.sequence;
      submitted_ = seq;
      owner_->submit(
          r.event, std::move(args),
          [this, seq](host::EventReply reply) {
            if (reply.kind == host::EventReply::Kind::Committed && reply.sequence == seq) return;
            if (reply.kind == host::EventReply::Kind::Unavailable && stopping()) return;
            fatal("event " + std::to_string(seq) + " from the stream did not commit here as it did on the leader (" +
                  (reply.kind == host::EventReply::Kind::Committed ? "as event " + std::to_string(reply.sequence)
                                                                   : reply.reason) +
                  ")");
          },
          std::string(r.key));
    }
    stream_messages_ = stream_seq;
    // Bounded work in flight: the owner's queue never fills with the stream's records.
    while (submitted_ > owner_->visible().second + limits::kClusterApplyAhead && role_.load() != Role::Stopped)
      if (!pause(1)) return;
  }

  // Follower: reads the lease; takes it once it has not changed for a whole lease, or was given up
  // (an empty holder: release()), and this node has applied the whole stream.
  void watch_lease() {
    kvEntry* e = nullptr;
    natsStatus s = kvStore_Get(&e, kv_, "leader");
    uint64_t rev = 0;
    bool released = false;
    if (s == NATS_OK) {
      rev = kvEntry_Revision(e);
      std::string value = kvEntry_ValueString(e) ? kvEntry_ValueString(e) : "";
      kvEntry_Destroy(e);
      released = value.empty();
      size_t sp = value.find(' ');
      std::lock_guard<std::mutex> lock(mu_);
      leader_ = value.substr(0, sp);
      leader_url_ = sp == std::string::npos ? "" : value.substr(sp + 1);
    } else if (s != NATS_NOT_FOUND) {
      return;  // cannot tell: wait
    }
    if (rev != seen_rev_ || !seen_any_) {
      seen_any_ = true;
      seen_rev_ = rev;
      seen_at_ = Clock::now();
      if (rev != 0 && !released) return;
    }
    if (rev != 0 && !released && Clock::now() - seen_at_ < std::chrono::milliseconds(options_.lease_ms)) return;
    // Lapsed (or never taken). Only a node with the whole stream applied may take it.
    if (owner_->visible().second != submitted_) return;
    uint64_t last = 0;
    if (!stream_last(&last) || last != stream_messages_) return;
    const int64_t sent = now_ns();
    uint64_t new_rev = 0;
    s = rev == 0 ? kvStore_Create(&new_rev, kv_, "leader", lease_value_.data(), static_cast<int>(lease_value_.size()))
                 : kvStore_Update(&new_rev, kv_, "leader", lease_value_.data(), static_cast<int>(lease_value_.size()), rev);
    if (s != NATS_OK) return;  // another node took it first
    // A deposed leader may have published between the check and the take: then this node is
    // behind the stream and must not lead. It gives the lease up again (its store holds only the
    // stream's records: nothing to undo) and goes on following; a caught-up node takes it.
    if (!stream_last(&last) || last != stream_messages_) {
      uint64_t released_rev = 0;
      kvStore_Update(&released_rev, kv_, "leader", "", 0, new_rev);
      return;
    }
    lease_rev_ = new_rev;
    lease_deadline_ns_ = sent + static_cast<int64_t>(options_.lease_ms) * 2'000'000 / 3;
    expected_stream_seq_ = last;
    next_event_seq_ = submitted_ + 1;
    stream_events_ = submitted_;
    if (sub_) {
      natsSubscription_Unsubscribe(sub_);
      natsSubscription_Destroy(sub_);
      sub_ = nullptr;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      leader_ = options_.node;
      leader_url_ = options_.advertise;
    }
    ++failovers_;
    role_.store(Role::Leader, std::memory_order_release);
  }

  // Leader: renews the lease by compare-and-set on its revision.
  void renew() {
    const int64_t sent = now_ns();
    uint64_t new_rev = 0;
    natsStatus s = kvStore_Update(&new_rev, kv_, "leader", lease_value_.data(), static_cast<int>(lease_value_.size()),
                                  lease_rev_);
    if (s == NATS_OK) {
      lease_rev_ = new_rev;
      lease_deadline_ns_ = sent + static_cast<int64_t>(options_.lease_ms) * 2'000'000 / 3;
      return;
    }
    kvEntry* e = nullptr;
    if (kvStore_Get(&e, kv_, "leader") == NATS_OK) {
      uint64_t rev = kvEntry_Revision(e);
      std::string holder = kvEntry_ValueString(e) ? kvEntry_ValueString(e) : "";
      kvEntry_Destroy(e);
      if (rev != lease_rev_)
        return stop_for("deposed: the lease is now held by " + holder.substr(0, holder.find(' ')), true);
    }
    if (now_ns() > lease_deadline_ns_.load() + static_cast<int64_t>(options_.lease_ms) * 1'000'000)
      stop_for("the lease could not be renewed for a whole lease (" + std::to_string(options_.lease_ms) + " ms): " +
                   nats_error(s),
               true);
  }

  // The stream sequence of the first message holding an event after `applied` (the stream's last
  // plus one when none does): a binary search by direct reads of the messages' Pure-Last-Sequence
  // headers, which grow with the stream's sequence (each message continues the one before it).
  // false: NATS did not answer (try again).
  bool first_unapplied(uint64_t applied, uint64_t* first) {
    jsStreamInfo* si = nullptr;
    if (js_GetStreamInfo(&si, js_, stream_.c_str(), nullptr, nullptr) != NATS_OK) return false;
    uint64_t low = std::max<uint64_t>(si->State.FirstSeq, 1), high = si->State.LastSeq + 1;
    jsStreamInfo_Destroy(si);
    if (applied == 0) low = high = std::min(low, high);  // nothing applied: from the stream's first message
    while (low < high) {  // the answer is in [low, high]
      const uint64_t middle = low + (high - low) / 2;
      natsMsg* msg = nullptr;
      jsErrCode code = static_cast<jsErrCode>(0);
      if (js_GetMsg(&msg, js_, stream_.c_str(), middle, nullptr, &code) != NATS_OK) return false;
      const char* last = nullptr;
      uint64_t holds = 0;
      if (natsMsgHeader_Get(msg, "Pure-Last-Sequence", &last) == NATS_OK && last) holds = std::strtoull(last, nullptr, 10);
      natsMsg_Destroy(msg);
      if (holds > applied) high = middle;
      else low = middle + 1;
    }
    *first = low;
    return true;
  }


  // One published checkpoint: the stream messages first..last of the checkpoint stream.
  struct Published {
    uint64_t first = 0, last = 0, through = 0, bytes = 0, crc = 0;
  };

  static bool header_u64(natsMsg* msg, const char* name, uint64_t* out) {
    const char* v = nullptr;
    if (natsMsgHeader_Get(msg, name, &v) != NATS_OK || !v || !*v) return false;
    char* end = nullptr;
    *out = std::strtoull(v, &end, 10);
    return *end == '\0';
  }

  // Reads a chunk's headers: false when it is not one of this module's chunks.
  bool chunk_headers(natsMsg* msg, uint64_t* through, uint64_t* chunk, uint64_t* chunks, uint64_t* bytes, uint64_t* crc) {
    const char* module = nullptr;
    if (natsMsgHeader_Get(msg, "Pure-Module", &module) != NATS_OK || !module || hex(identity_) != module) return false;
    return header_u64(msg, "Pure-Through", through) && header_u64(msg, "Pure-Chunk", chunk) &&
           header_u64(msg, "Pure-Chunks", chunks) && header_u64(msg, "Pure-Bytes", bytes) &&
           header_u64(msg, "Pure-Crc32c", crc) && *chunks > 0 && *chunk < *chunks;
  }

  // The newest complete checkpoints of the checkpoint stream, newest first, at most want: walks
  // back from its last message by the chunks' headers (a run without its last chunk, cut short by
  // a leader's end, is skipped). false: NATS did not answer.
  bool published_checkpoints(size_t want, std::vector<Published>* out) {
    out->clear();
    jsStreamInfo* si = nullptr;
    if (js_GetStreamInfo(&si, js_, ckpt_stream_.c_str(), nullptr, nullptr) != NATS_OK) return false;
    const uint64_t first = std::max<uint64_t>(si->State.FirstSeq, 1);
    uint64_t at = si->State.LastSeq;
    jsStreamInfo_Destroy(si);
    while (at >= first && at != 0 && out->size() < want) {
      natsMsg* msg = nullptr;
      jsErrCode code = static_cast<jsErrCode>(0);
      if (js_GetMsg(&msg, js_, ckpt_stream_.c_str(), at, nullptr, &code) != NATS_OK) return false;
      uint64_t through = 0, chunk = 0, chunks = 0, bytes = 0, crc = 0;
      bool ok = chunk_headers(msg, &through, &chunk, &chunks, &bytes, &crc);
      natsMsg_Destroy(msg);
      if (!ok) {
        --at;
        continue;
      }
      const uint64_t start = at >= chunk ? at - chunk : 0;  // this run's first chunk
      if (chunk + 1 == chunks && start >= first) out->push_back(Published{start, at, through, bytes, crc});
      if (start == 0) break;
      at = start - 1;
    }
    return true;
  }

  // The chunks of one published checkpoint, each checked to be its run's next, then the whole
  // file's size and crc32c: "" or what is wrong (trimmed meanwhile, or damaged).
  std::string read_checkpoint_chunks(const Published& p, std::string* out) {
    out->clear();
    if (p.bytes > kClusterCheckpointMaxBytes) return "a published checkpoint larger than the limit";
    out->reserve(p.bytes);
    for (uint64_t at = p.first; at <= p.last; ++at) {
      natsMsg* msg = nullptr;
      jsErrCode code = static_cast<jsErrCode>(0);
      if (natsStatus s = js_GetMsg(&msg, js_, ckpt_stream_.c_str(), at, nullptr, &code); s != NATS_OK)
        return "checkpoint message " + std::to_string(at) + ": " + nats_error(s, code);
      uint64_t through = 0, chunk = 0, chunks = 0, bytes = 0, crc = 0;
      bool ok = chunk_headers(msg, &through, &chunk, &chunks, &bytes, &crc) && through == p.through &&
                chunk == at - p.first && chunks == p.last - p.first + 1 && bytes == p.bytes && crc == p.crc &&
                out->size() + static_cast<uint64_t>(natsMsg_GetDataLength(msg)) <= p.bytes;
      if (ok) out->append(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg)));
      natsMsg_Destroy(msg);
      if (!ok) return "checkpoint message " + std::to_string(at) + " is not chunk " + std::to_string(at - p.first) +
                      " of checkpoint " + std::to_string(p.through);
    }
    if (out->size() != p.bytes || host::transfer_checksum(*out) != p.crc)
      return "checkpoint " + std::to_string(p.through) + ": size or crc32c mismatch (a damaged transfer)";
    return "";
  }

  // Whether the event stream still holds event `event` (its first message's first record is at or
  // before it). false: NATS did not answer.
  bool stream_holds(uint64_t event, bool* holds) {
    jsStreamInfo* si = nullptr;
    if (js_GetStreamInfo(&si, js_, stream_.c_str(), nullptr, nullptr) != NATS_OK) return false;
    const uint64_t first = si->State.FirstSeq, last = si->State.LastSeq;
    jsStreamInfo_Destroy(si);
    if (last == 0 || first > last) {  // empty: holds nothing (never trimmed empty: it holds what follows)
      *holds = last == 0;  // a stream never published to holds every event to come
      return true;
    }
    natsMsg* msg = nullptr;
    jsErrCode code = static_cast<jsErrCode>(0);
    if (js_GetMsg(&msg, js_, stream_.c_str(), first, nullptr, &code) != NATS_OK) return false;
    std::string_view data(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg)));
    host::ShippedRecord r;
    size_t offset = 0;
    std::string e = host::read_shipped_record(data, &offset, &r);
    natsMsg_Destroy(msg);
    *holds = e.empty() && r.sequence <= event;
    return e.empty();
  }

  // Purges the stream's messages before `sequence`. Never with sequence 1 (nothing to purge):
  // nats-server 2.9 (Debian 12's) purges the whole stream for a purge up to sequence 1, which
  // emptied the checkpoint stream after the second checkpoint (a wiped node then found none to
  // install) and the event stream at its first trim.
  bool purge_below(const std::string& stream, uint64_t sequence) {
    if (sequence <= 1) return true;
    jsOptions o;
    jsOptions_Init(&o);
    o.Stream.Purge.Sequence = sequence;
    jsErrCode code = static_cast<jsErrCode>(0);
    return js_PurgeStream(js_, stream.c_str(), &o, &code) == NATS_OK;
  }

  // After a checkpoint was published: keeps the newest kClusterCheckpointsKept, and trims the
  // event stream below the first message holding an event after the oldest kept (never its last
  // message: the stream's last sequence is what the next leader publishes after).
  std::string trim() {
    std::vector<Published> kept;
    if (!published_checkpoints(kClusterCheckpointsKept, &kept)) return "not trimmed: NATS did not answer";
    if (kept.size() < kClusterCheckpointsKept) return "";
    const Published& oldest = kept.back();
    if (!purge_below(ckpt_stream_, oldest.first)) return "the checkpoint stream was not trimmed: NATS did not answer";
    uint64_t first = 0, last = 0;
    if (!first_unapplied(oldest.through, &first) || !stream_last(&last)) return "not trimmed: NATS did not answer";
    first = std::min(first, last);
    if (first > trimmed_below_.load()) {
      if (!purge_below(stream_, first)) return "the stream was not trimmed: NATS did not answer";
      trimmed_below_ = first;
    }
    return "";
  }

  bool stream_last(uint64_t* last) {
    jsStreamInfo* si = nullptr;
    if (js_GetStreamInfo(&si, js_, stream_.c_str(), nullptr, nullptr) != NATS_OK) return false;
    *last = si->State.LastSeq;
    jsStreamInfo_Destroy(si);
    return true;
  }

  struct Pending {
    uint64_t sequence;
    uint32_t event;
    std::string args;
  };

  const ClusterOptions options_;
  const std::string module_;
  const uint64_t identity_;
  const OnStop on_stop_;
  const std::string stream_, subject_, bucket_, ckpt_stream_, ckpt_subject_, lease_value_;

  natsConnection* nc_ = nullptr;
  jsCtx* js_ = nullptr;
  kvStore* kv_ = nullptr;
  natsSubscription* sub_ = nullptr;  // the replica thread's
  host::Owner* owner_ = nullptr;

  std::atomic<Role> role_{Role::Follower};
  mutable std::mutex mu_;  // owner_ (its change), leader_, leader_url_, failure_, and the move to Stopped
  std::string leader_, leader_url_, failure_;
  std::atomic<uint64_t> stream_events_{0}, stream_messages_{0}, failovers_{0}, rejoins_{0}, read_from_{0};
  std::atomic<uint64_t> installed_{0}, published_{0}, trimmed_below_{0};
  std::atomic<bool> behind_{false};  // stopped because the stream was trimmed past its log (start() clears it)

  // The replica thread's (the consumer and the lease).
  uint64_t submitted_ = 0;  // the last event sequence submitted to the owner (or in its log)
  bool seen_any_ = false;
  uint64_t seen_rev_ = 0;
  Clock::time_point seen_at_;
  uint64_t lease_rev_ = 0;  // the lease's revision while this node holds it (0: not held)
  std::atomic<int64_t> lease_deadline_ns_{0};

  // The owner thread's once leading (set by the replica thread before role_ turns Leader).
  uint64_t expected_stream_seq_ = 0;
  uint64_t next_event_seq_ = 1;
  std::string payload_;

  std::mutex pending_mu_;
  std::deque<Pending> pending_;  // submitted to the owner, not yet appended

  // The publisher thread's hand-over (publish_checkpoint): the newest checkpoint not yet sent.
  struct PublishJob {
    std::string path;
    uint64_t through = 0;  // 0: none
    PublishReport report;
  };
  std::mutex publish_mu_;
  std::condition_variable publish_cv_;
  PublishJob publish_next_;
  bool publish_quit_ = false;
  std::thread publisher_;

  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread thread_;
};

uint64_t ReplicatedLog::append(std::span<const host::CommittedEvent> events) {
  return replica_.append(*local_, listener_, events);
}

}  // namespace

Status open_replica(const ClusterOptions& options, const std::string& module, uint64_t identity, OnStop on_stop,
                    std::unique_ptr<Replica>* out) {
  if (options.servers.empty()) return Status::failure("--cluster names no NATS server");
  if (options.node.empty()) return Status::failure("--cluster needs --node NAME (this node's name in the cluster)");
  auto r = std::make_unique<ReplicaImpl>(options, module, identity, std::move(on_stop));
  if (Status s = r->connect(); !s.ok()) return s;
  *out = std::move(r);
  return Status::success();
}

}  // namespace pure::cluster
