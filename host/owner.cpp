// host/owner.cpp — the owner thread (see owner.h): a queue in, batches run with vm::call_event,
// committed events to the Durability, replies and snapshots released once durable.
#include "host/owner.h"

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
  std::string close() override {
    closed_ = true;
    return "";
  }

 private:
  DurableListener listener_;
  uint64_t last_ = 0;
  bool closed_ = false;
};

}  // namespace

std::unique_ptr<Durability> make_no_durability() { return std::make_unique<NoDurability>(); }

Owner::Owner(std::string name, const vm::Program& program, std::unique_ptr<rt::Store> store,
             std::unique_ptr<Durability> durability, OwnerOptions options)
    : name_(std::move(name)),
      program_(program),
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

void Owner::submit(uint32_t fn, std::vector<vm::Value> args, EventDone done, std::string key) {
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
      queue_.push_back(Pending{fn, std::move(args), std::move(done), std::move(key)});
      if (queue_.size() == 1) queue_cv_.notify_one();
      return;
    }
  }
  ++unavailable_;
  done(EventReply{EventReply::Kind::Unavailable, 0, std::move(refused)});
}

std::shared_ptr<const rt::Snapshot> Owner::snapshot() const { return visible_.read().first; }

std::pair<std::shared_ptr<const rt::Snapshot>, uint64_t> Owner::visible() const { return visible_.read(); }

vm::CallResult Owner::query(uint32_t fn, std::span<const vm::Value> args, const std::atomic<const char*>* cancel) const {
  // Against the module's budget, the state it holds counted in (a query's snapshot shares it).
  vm::RunOptions o = run_options_;
  o.memory_held = memory_held_.load(std::memory_order_relaxed);
  o.cancel = cancel;
  return vm::call_query(program_, snapshot(), fn, args, o);
}

vm::CallResult Owner::query_at(std::shared_ptr<const rt::Snapshot> snapshot, uint64_t memory_held, uint32_t fn,
                               std::span<const vm::Value> args, const std::atomic<const char*>* cancel) const {
  vm::RunOptions o = run_options_;
  o.memory_held = memory_held_.load(std::memory_order_relaxed) + memory_held;
  o.cancel = cancel;
  return vm::call_query(program_, std::move(snapshot), fn, args, o);
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
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(queue_mu_);
      queue_cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left
      batch.swap(queue_);
    }
    ++batches_;
    Waiting w;
    w.replies.reserve(batch.size());
    committed.clear();
    committed_at.clear();
    keyed_results.assign(batch.size(), std::string());  // sized once: the logged views stay valid
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
            std::vector<vm::Value> result;
            if (seen->result.empty() || !decode_values(seen->result, &result).ok() || result.size() != 1)
              reply.result_error = "the original result was not kept (it was too large to send then too)";
            else
              reply.value = std::move(result[0]);
            w.replies.emplace_back(std::move(p.done), std::move(reply));
            continue;
          }
        }
        vm::CallResult r;
        try {
          r = vm::call_event(program_, *store_, p.fn, p.args, event_options());
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
          reply.result_bytes_at_least = r.result_bytes_at_least;
          reply.result_error = std::move(r.result_error);
          w.replies.emplace_back(std::move(p.done), std::move(reply));
        } else {
          w.replies.emplace_back(std::move(p.done), EventReply{EventReply::Kind::Failed, 0, std::move(r.reason)});
        }
      }
      if (!committed.empty()) {
        uint64_t last = durability_->append(committed);
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
