// host/owner.cpp — the owner thread (see owner.h): a queue in, batches run with vm::call_event,
// committed events to the Durability, replies and snapshots released once durable.
#include "host/owner.h"

#include <chrono>
#include <utility>

namespace pure::host {

namespace {

class NoDurability final : public Durability {
 public:
  void set_listener(DurableListener listener) override { listener_ = std::move(listener); }
  uint64_t last_sequence() const override { return 0; }
  uint64_t append(std::span<const CommittedEvent> events) override {
    if (closed_) return 0;
    last_ += events.size();
    if (listener_) listener_(last_, false, "");
    return last_;
  }
  uint64_t append_version(uint32_t) override {
    if (closed_) return 0;
    ++last_;
    if (listener_) listener_(last_, false, "");
    return last_;
  }
  std::string close() override {
    closed_ = true;
    return "";
  }

 private:
  DurableListener listener_;
  uint64_t last_ = 0;
  bool closed_ = false;
};

// The same type as a caller sees it (descriptor indexes aside, which differ between programs).
bool same_type(const ir::ValueType& a, const ir::ValueType& b) {
  if (a.kind != b.kind || a.name != b.name || a.field_names != b.field_names || a.key_count != b.key_count ||
      a.row_is_item != b.row_is_item || a.fields.size() != b.fields.size())
    return false;
  for (size_t i = 0; i < a.fields.size(); ++i)
    if (!same_type(a.fields[i], b.fields[i])) return false;
  return true;
}

}  // namespace

std::unique_ptr<Durability> make_no_durability() { return std::make_unique<NoDurability>(); }

Owner::Owner(std::string name, const vm::Program& program, std::unique_ptr<rt::Store> store,
             std::unique_ptr<Durability> durability, OwnerOptions options)
    : name_(std::move(name)),
      first_program_(program),
      program_(&program),
      version_(options.version),
      versions_{Version{options.version, options.version_begins, &program}},
      store_(std::move(store)),
      durability_(std::move(durability)),
      options_(options) {
  run_options_.max_steps = options_.max_steps;
  run_options_.tier = options_.tier;
  if (options_.max_memory) run_options_.max_memory = options_.max_memory;
  run_options_.max_result_bytes = options_.max_result_bytes;
  uint64_t last = durability_->last_sequence();
  next_sequence_ = last + 1;
  durable_ = last;
  visible_sequence_ = last;
  std::shared_ptr<const rt::Snapshot> first = store_->publish();
  durability_->published(first, last);
  visible_.publish(std::move(first), last);
  rt::MemoryUse m = store_->memory();
  state_bytes_ = m.state_bytes;
  structure_bytes_ = m.structure_bytes;
  memory_held_ = m.state_bytes + m.structure_bytes;
  if (options_.pool) options_.pool->held += memory_held_.load();
  durability_->take_keys(&keys_);
  durability_->set_listener(
      [this](uint64_t sequence, bool poisoned, const std::string& reason) { on_durable(sequence, poisoned, reason); });
  thread_ = std::thread([this] { run(); });
}

Owner::~Owner() { close(); }

void Owner::submit(uint32_t fn, std::vector<vm::Value> args, EventDone done, std::string key,
                   const vm::Program* decoded_for) {
  std::string refused;
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    if (stopping_) {
      refused = "module " + name_ + " is shutting down";
    } else if (poisoned_.load(std::memory_order_acquire)) {
      refused = "module " + name_ + " is unhealthy: " + unhealthy_reason();
    } else if (queue_.size() >= options_.max_queue) {
      refused = "module " + name_ + " has " + std::to_string(queue_.size()) + " events queued (the limit)";
    } else {
      queue_.push_back(Pending{fn, std::move(args), std::move(done), std::move(key), decoded_for});
      if (queue_.size() == 1) queue_cv_.notify_one();
      return;
    }
  }
  ++unavailable_;
  done(EventReply{EventReply::Kind::Unavailable, 0, std::move(refused)});
}

void Owner::upgrade(HotUpgrade upgrade, std::function<void(const HotUpgradeDone&)> done) {
  std::string refused;
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    if (stopping_) refused = "module " + name_ + " is shutting down";
    else if (poisoned_.load(std::memory_order_acquire)) refused = "module " + name_ + " is unhealthy: " + unhealthy_reason();
    else {
      upgrades_.push_back(Upgrading{std::move(upgrade), std::move(done)});
      queue_cv_.notify_one();
      return;
    }
  }
  HotUpgradeDone d;
  d.error = std::move(refused);
  done(d);
}

std::pair<const vm::Program*, uint32_t> Owner::program_at(uint64_t sequence) const {
  std::lock_guard<std::mutex> lock(versions_mu_);
  const Version* v = &versions_.front();
  for (const Version& x : versions_)
    if (x.begins <= sequence) v = &x;
  return {v->program, v->number};
}

int64_t Owner::remap(const vm::Program& from, const vm::Program& to, uint32_t to_version, uint32_t fn,
                     std::string* why) const {
  const vm::Function& old = from.functions[fn];
  const char* what = old.kind == FuncKind::Event ? "event " : "query ";
  int index = vm::find_function(to, old.name);
  std::string upgraded = "module " + name_ + " was upgraded to version " + std::to_string(to_version) + " while " +
                         what + old.name + " waited";
  if (index < 0 || to.functions[index].kind != old.kind) {
    *why = upgraded + ", and version " + std::to_string(to_version) + " has no " + what + old.name + " (not run)";
    return -1;
  }
  const vm::Function& now = to.functions[index];
  bool same = now.param_types.size() == old.param_types.size() && same_type(now.result_type, old.result_type);
  for (size_t i = 0; same && i < now.param_types.size(); ++i) same = same_type(now.param_types[i], old.param_types[i]);
  if (!same) {
    *why = upgraded + ", whose " + what + old.name +
           " takes other parameters or returns another type (not run: send it again)";
    return -1;
  }
  return index;
}

void Owner::run_upgrade(Upgrading& u) {
  HotUpgradeDone d;
  auto started = std::chrono::steady_clock::now();
  if (poisoned_.load(std::memory_order_acquire)) {
    d.error = "module " + name_ + " is unhealthy: " + unhealthy_reason();
    u.done(d);
    return;
  }
  if (!u.upgrade.prepare(*store_, next_sequence_)) {
    u.done(d);
    return;
  }
  uint64_t sequence = durability_->append_version(u.upgrade.version);
  if (sequence == 0) {
    d.error = "the log did not take the version record (it is poisoned or closed, or keeps no versions)";
    u.done(d);
    return;
  }
  next_sequence_ = sequence + 1;
  {  // the new version begins only once its record is durable (else recovery would not know it)
    std::unique_lock<std::mutex> lock(waiting_mu_);
    durable_cv_.wait(lock, [&] { return durable_ >= sequence || poisoned_.load(std::memory_order_relaxed); });
    if (durable_ < sequence) {
      d.error = "the version record did not become durable: " + poison_reason_;
      u.done(d);
      return;
    }
  }
  if (std::string why = u.upgrade.apply(&store_); !why.empty()) {
    on_durable(0, true, "the upgrade to version " + std::to_string(u.upgrade.version) + " failed after its record was durable: " + why);
    d.error = why;
    u.done(d);
    return;
  }
  program_ = u.upgrade.program;
  version_ = u.upgrade.version;
  {
    std::lock_guard<std::mutex> lock(versions_mu_);
    versions_.push_back(Version{version_, sequence, program_});
  }
  note_memory();
  Waiting w;
  w.through = sequence;
  w.snapshot = store_->publish();
  rt::MemoryUse m = store_->memory();
  state_bytes_ = m.state_bytes;
  structure_bytes_ = m.structure_bytes;
  std::vector<Waiting> ready;
  {
    std::lock_guard<std::mutex> lock(waiting_mu_);
    waiting_.push_back(std::move(w));
    collect_ready(ready);
  }
  deliver(ready);
  d.applied = true;
  d.sequence = sequence;
  d.pause_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  u.done(d);
}

std::shared_ptr<const rt::Snapshot> Owner::snapshot() const { return visible_.read().first; }

std::pair<std::shared_ptr<const rt::Snapshot>, uint64_t> Owner::visible() const { return visible_.read(); }

vm::CallResult Owner::query(uint32_t fn, std::span<const vm::Value> args, const std::atomic<const char*>* cancel,
                            const vm::Program* decoded_for) const {
  // Against the module's budget, the state it holds counted in (a query's snapshot shares it).
  vm::RunOptions o = run_options_;
  o.memory_held = memory_held_.load(std::memory_order_relaxed);
  o.cancel = cancel;
  auto [snap, sequence] = visible();
  auto [program, version] = program_at(sequence);  // the code of the version the snapshot is in
  if (decoded_for && decoded_for != program) {      // a hot upgrade came between
    std::string why;
    int64_t index = remap(*decoded_for, *program, version, fn, &why);
    if (index < 0) {
      vm::CallResult r;
      r.ok = false;
      r.reason = std::move(why);
      return r;
    }
    fn = static_cast<uint32_t>(index);
  }
  return vm::call_query(*program, snap, fn, args, o);
}

vm::CallResult Owner::query_at(const vm::Program& program, std::shared_ptr<const rt::Snapshot> snapshot,
                               uint64_t memory_held, uint32_t fn, std::span<const vm::Value> args,
                               const std::atomic<const char*>* cancel) const {
  vm::RunOptions o = run_options_;
  o.memory_held = memory_held_.load(std::memory_order_relaxed) + memory_held;
  o.cancel = cancel;
  return vm::call_query(program, std::move(snapshot), fn, args, o);
}

vm::RunOptions Owner::event_options() const {
  vm::RunOptions o = run_options_;
  uint64_t held = memory_held_.load(std::memory_order_relaxed);
  o.memory_held = held;
  if (const MemoryPool* pool = options_.pool.get()) {
    uint64_t all = pool->held.load(std::memory_order_relaxed);
    uint64_t room = o.max_memory > held ? o.max_memory - held : 0;
    uint64_t pool_room = pool->limit > all ? pool->limit - all : 0;
    if (pool_room < room) {
      o.max_memory = pool->limit;
      o.memory_held = all;
      o.memory_option = "--max-memory-total";
    }
  }
  return o;
}

void Owner::note_memory() {
  rt::MemoryUse m = store_->memory();
  uint64_t now = m.state_bytes + m.structure_bytes;
  uint64_t before = memory_held_.exchange(now, std::memory_order_relaxed);
  if (options_.pool) options_.pool->held += now - before;  // unsigned wrap-around subtracts
}

std::string Owner::unhealthy_reason() const {
  std::lock_guard<std::mutex> lock(waiting_mu_);
  return poison_reason_;
}

OwnerStats Owner::stats() const {
  OwnerStats s;
  s.committed = committed_.load();
  s.failed = failed_.load();
  s.replayed = replayed_.load();
  s.key_reused = key_reused_.load();
  s.unavailable = unavailable_.load();
  s.batches = batches_.load();
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    s.queued = queue_.size();
  }
  s.visible_sequence = visible_sequence_.load();
  s.memory_bytes = memory_held_.load();
  s.memory_budget = run_options_.max_memory;
  s.state_bytes = state_bytes_.load();
  s.structure_bytes = structure_bytes_.load();
  {
    std::lock_guard<std::mutex> lock(waiting_mu_);
    s.snapshots_held = 1;  // the visible one
    for (const Waiting& w : waiting_) s.snapshots_held += w.snapshot != nullptr;
  }
  s.durability = durability_->stats();
  return s;
}

void Owner::run() {
  std::vector<Pending> batch;
  std::vector<CommittedEvent> committed;
  std::vector<size_t> committed_at;  // index in batch of each committed event
  std::vector<std::string> keyed_results;  // a keyed event's encoded result (logged with it), by index in batch
  std::vector<std::string> failure_reasons;  // a failed event's reason (its audit-only record), by index in batch
  const bool audit_failed = durability_->audits_failed();
  std::vector<Upgrading> upgrades;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(queue_mu_);
      queue_cv_.wait(lock, [this] { return stopping_ || !queue_.empty() || !upgrades_.empty(); });
      upgrades.swap(upgrades_);
      if (upgrades.empty() && queue_.empty()) return;  // stopping, and nothing left
      if (upgrades.empty()) batch.swap(queue_);
    }
    if (!upgrades.empty()) {  // between two batches
      for (Upgrading& u : upgrades) run_upgrade(u);
      upgrades.clear();
      continue;
    }
    ++batches_;
    Waiting w;
    w.replies.reserve(batch.size());
    committed.clear();
    committed_at.clear();
    keyed_results.assign(batch.size(), std::string());  // sized once: the logged views stay valid
    failure_reasons.assign(batch.size(), std::string());  // likewise a failed event's reason
    if (poisoned_.load(std::memory_order_acquire)) {
      std::string why = "module " + name_ + " is unhealthy: " + unhealthy_reason();
      for (Pending& p : batch) w.replies.emplace_back(std::move(p.done), EventReply{EventReply::Kind::Unavailable, 0, why});
    } else {
      for (size_t i = 0; i < batch.size(); ++i) {
        Pending& p = batch[i];
        uint64_t args_hash = 0;
        if (!p.key.empty()) {
          // A key seen in the window (a retry, or a twin in this batch) is answered, not run.
          args_hash = arguments_hash(encode_values(p.args));
          if (const KeyedEvent* seen = keys_.find(p.key, wall_clock_ms())) {
            if (seen->event != p.fn || seen->args_hash != args_hash) {
              std::string what = seen->event == p.fn ? "other arguments" : "another event";
              w.replies.emplace_back(std::move(p.done),
                                     EventReply{EventReply::Kind::KeyReused, seen->sequence,
                                                "Idempotency-Key '" + p.key + "' was already used, with " + what +
                                                    ", by the event committed as seq " + std::to_string(seen->sequence) +
                                                    "; a retry must repeat the same event and arguments, a new request "
                                                    "needs a new key"});
              continue;
            }
            EventReply reply{EventReply::Kind::Committed, seen->sequence, ""};
            reply.replayed = true;
            reply.version = program_at(seen->sequence).second;
            std::vector<vm::Value> result;
            if (seen->result.empty() || !decode_values(seen->result, &result).ok() || result.size() != 1)
              reply.result_error = "the original result was not kept (it was too large to send then too)";
            else
              reply.value = std::move(result[0]);
            w.replies.emplace_back(std::move(p.done), std::move(reply));
            continue;
          }
        }
        if (p.decoded_for && p.decoded_for != program_) {  // a hot upgrade came between
          std::string why;
          int64_t index = remap(*p.decoded_for, *program_, version_, p.fn, &why);
          if (index < 0) {
            EventReply failed{EventReply::Kind::Failed, 0, std::move(why)};
            failed.version = version_;
            w.replies.emplace_back(std::move(p.done), std::move(failed));
            continue;
          }
          p.fn = static_cast<uint32_t>(index);
        }
        vm::CallResult r;
        try {
          r = vm::call_event(*program_, *store_, p.fn, p.args, event_options());
        } catch (const std::bad_alloc&) {
          // before the event ran (its machine could not be set up): it changed nothing; inside
          // it, call_event turns running out of memory into the event's runtime error
          r.ok = false;
          r.reason = "out of memory: the system refused the memory to start the event";
        }
        note_memory();
        if (r.ok) {
          if (!p.key.empty()) {
            if (r.result_bytes_at_least == 0 && r.result_error.empty())
              keyed_results[i] = encode_values(std::span<const vm::Value>(&r.value, 1));
            // Its sequence: the next after the batch's committed events so far (append numbers
            // them consecutively from next_sequence_). If the log refuses the batch, the module
            // is unhealthy for good and answers no event again.
            keys_.remember(p.key, KeyedEvent{p.fn, args_hash, next_sequence_ + committed.size(), wall_clock_ms(),
                                             keyed_results[i]},
                           wall_clock_ms());
          }
          committed.push_back(CommittedEvent{p.fn, p.args, p.key, keyed_results[i]});
          committed_at.push_back(i);
          EventReply reply{EventReply::Kind::Committed, 0, "", std::move(r.value)};
          reply.version = version_;
          reply.result_bytes_at_least = r.result_bytes_at_least;
          reply.result_error = std::move(r.result_error);
          w.replies.emplace_back(std::move(p.done), std::move(reply));
        } else {
          if (audit_failed) {  // an audit-only record: its arguments and reason, no key
            // The reason is not copied: the record views it here, and once the log has encoded
            // it (append, below), it moves on into the reply.
            failure_reasons[i] = std::move(r.reason);
            committed.push_back(CommittedEvent{p.fn, p.args, {}, failure_reasons[i], true});
            committed_at.push_back(i);
          }
          EventReply failed{EventReply::Kind::Failed, 0, std::move(r.reason)};  // empty when audited
          failed.version = version_;
          w.replies.emplace_back(std::move(p.done), std::move(failed));
        }
      }
      if (!committed.empty()) {
        uint64_t last = durability_->append(committed);
        for (size_t k = 0; k < committed.size(); ++k)  // the failed records' reasons, encoded: the replies' now
          if (committed[k].failed)
            w.replies[committed_at[k]].second.reason = std::move(failure_reasons[committed_at[k]]);
        if (last == 0) {
          // The log refused the batch: nothing of it is acknowledged; the live store now holds
          // changes that will never be visible, so the module stays unhealthy.
          on_durable(0, true, "the log refused a batch (poisoned or closed)");
          for (auto& [done, reply] : w.replies) reply = EventReply{EventReply::Kind::Unavailable, 0,
                                                                   "module " + name_ + " is unhealthy: " + unhealthy_reason()};
        } else {
          uint64_t first = last + 1 - committed.size();
          for (size_t k = 0; k < committed_at.size(); ++k) w.replies[committed_at[k]].second.sequence = first + k;
          next_sequence_ = last + 1;
          w.snapshot = store_->publish();
          rt::MemoryUse m = store_->memory();
          state_bytes_ = m.state_bytes;
          structure_bytes_ = m.structure_bytes;
        }
      }
    }
    batch.clear();
    w.through = next_sequence_ - 1;
    std::vector<Waiting> ready;
    {
      std::lock_guard<std::mutex> lock(waiting_mu_);
      if (poisoned_.load(std::memory_order_relaxed)) {
        for (auto& [done, reply] : w.replies)
          if (reply.kind != EventReply::Kind::Unavailable)
            reply = EventReply{EventReply::Kind::Unavailable, 0, "module " + name_ + " is unhealthy: " + poison_reason_};
        w.snapshot.reset();
        w.through = 0;
      }
      waiting_.push_back(std::move(w));
      collect_ready(ready);
    }
    deliver(ready);
  }
}

std::string Owner::report_unhealthy(const std::string& reason) {
  std::lock_guard<std::mutex> guard(report_mu_);
  if (!reported_) {
    reported_ = true;
    reported_reason_ = reason.empty() ? std::string("the log failed") : reason;
    if (options_.on_unhealthy) options_.on_unhealthy(reported_reason_);
  }
  return reported_reason_;
}

void Owner::on_durable(uint64_t sequence, bool poisoned, const std::string& reason) {
  std::vector<Waiting> ready;
  // Reported first: the log thread and the owner thread (a refused append) can both learn of the
  // failure, and whichever publishes the poison, the callback has returned by then, so it is
  // ordered before every Unavailable reply the failure causes.
  std::string why = poisoned ? report_unhealthy(reason) : std::string();
  {
    std::lock_guard<std::mutex> lock(waiting_mu_);
    if (poisoned) {
      if (!poisoned_.load(std::memory_order_relaxed)) {
        poison_reason_ = why;
        poisoned_.store(true, std::memory_order_release);
      }
      // Batches not yet durable will never be acknowledged.
      for (Waiting& w : waiting_) {
        if (w.through <= durable_) continue;
        for (auto& [done, reply] : w.replies)
          reply = EventReply{EventReply::Kind::Unavailable, 0,
                             "module " + name_ + " is unhealthy: " + poison_reason_ +
                                 " (the event may or may not have been recorded)"};
        w.snapshot.reset();
        w.through = 0;
      }
    } else if (sequence > durable_) {
      durable_ = sequence;
    }
    collect_ready(ready);
  }
  durable_cv_.notify_all();
  deliver(ready);
}

void Owner::collect_ready(std::vector<Waiting>& out) {
  std::shared_ptr<const rt::Snapshot> newest;
  uint64_t newest_through = 0;
  while (!waiting_.empty() && waiting_.front().through <= durable_) {
    Waiting& w = waiting_.front();
    if (w.snapshot) {
      newest = std::move(w.snapshot);
      newest_through = w.through;
    }
    out.push_back(std::move(w));
    waiting_.pop_front();
  }
  if (newest) {
    durability_->published(newest, newest_through);
    // the snapshot it replaces is released here or, if a reader is copying it at this instant,
    // at a later publish
    visible_.publish(std::move(newest), newest_through);
    visible_sequence_.store(newest_through, std::memory_order_release);
  }
}

void Owner::deliver(std::vector<Waiting>& ready) {
  using Replies = std::vector<std::pair<EventDone, EventReply>>;
  std::shared_ptr<Replies> job;
  for (Waiting& w : ready)
    for (auto& item : w.replies) {
      switch (item.second.kind) {
        case EventReply::Kind::Committed: ++(item.second.replayed ? replayed_ : committed_); break;
        case EventReply::Kind::Failed: ++failed_; break;
        case EventReply::Kind::KeyReused: ++key_reused_; break;
        case EventReply::Kind::Unavailable: ++unavailable_; break;
      }
      if (!options_.reply_runner) {
        item.first(std::move(item.second));
        continue;
      }
      if (!job) job = std::make_shared<Replies>();
      job->push_back(std::move(item));
    }
  // The snapshots stay with ready (released by the caller, on this thread); only the callbacks go.
  if (job)
    options_.reply_runner([job] {
      for (auto& [done, reply] : *job) done(std::move(reply));
    });
}

std::string Owner::close() {
  std::lock_guard<std::mutex> guard(close_mu_);
  if (closed_) return close_result_;
  closed_ = true;
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    stopping_ = true;
  }
  queue_cv_.notify_one();
  if (thread_.joinable()) thread_.join();
  if (options_.pool) options_.pool->held -= memory_held_.load();  // this module's state leaves the pool
  close_result_ = durability_->close();
  // Whatever the log did not confirm is not acknowledged.
  std::vector<Waiting> left;
  {
    std::lock_guard<std::mutex> lock(waiting_mu_);
    for (Waiting& w : waiting_) {
      for (auto& [done, reply] : w.replies)
        reply = EventReply{EventReply::Kind::Unavailable, 0,
                           "module " + name_ + " closed before the event was durable" +
                               (close_result_.empty() ? std::string() : ": " + close_result_)};
      left.push_back(std::move(w));
    }
    waiting_.clear();
  }
  deliver(left);
  return close_result_;
}

}  // namespace pure::host
