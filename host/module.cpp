// host/module.cpp — Module: the owner thread of one durable module. It runs each arrived batch of
// events, appends the committed ones to the log without waiting, and parks the batch (its
// snapshot and its callers' replies) until the log reports it durable; then the snapshot becomes
// the visible one and the replies go out, in order. A checkpoint thread writes the visible
// snapshot when the log has grown enough. Depends on host.h only.
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "host/host.h"

namespace pure::host {

namespace {

struct Published {
  std::shared_ptr<const rt::Snapshot> snapshot;
  uint64_t sequence = 0;  // the snapshot holds exactly events 1..sequence
};

EventOutcome failed(std::string reason) {
  EventOutcome o;
  o.reason = std::move(reason);
  return o;
}

std::future<EventOutcome> ready(EventOutcome outcome) {
  std::promise<EventOutcome> p;
  p.set_value(std::move(outcome));
  return p.get_future();
}

class ModuleImpl final : public Module {
 public:
  ModuleImpl(FileSystem& fs, std::string dir, ModuleOptions options)
      : fs_(fs), dir_(std::move(dir)), options_(std::move(options)) {}

  ~ModuleImpl() override { close(); }

  Status start() {
    EventRunner* runner = options_.runner;
    OpenOptions o;
    o.module_identity = options_.module_identity;
    o.schemas = options_.schemas;
    o.log = options_.log;
    o.progress = options_.progress;
    o.progress_every = options_.progress_every;
    o.apply = [runner](rt::Store& store, const LogRecord& r) -> std::string {
      EventOutcome outcome = runner->run(store, r.event, r.args);
      return outcome.ok ? std::string() : outcome.reason.empty() ? "the event failed" : outcome.reason;
    };
    o.on_durable = [this](uint64_t durable, bool poisoned, const std::string& reason) {
      if (poisoned) poison(reason);
      else release(durable);
    };
    OpenedModule opened;
    if (Status s = open_module(fs_, dir_, std::move(o), &opened); !s.ok()) return s;
    store_ = std::move(opened.store);
    log_ = std::move(opened.log);
    report_ = opened.report;
    set_visible(std::make_shared<const Published>(Published{store_->publish(), report_.last_sequence}));
    checkpoint_bytes_ = log_->stats().bytes;
    owner_ = std::thread([this] { run_owner(); });
    checkpointer_ = std::thread([this] { run_checkpointer(); });
    return {};
  }

  std::future<EventOutcome> submit(uint32_t event, std::string args) override {
    std::unique_lock<std::mutex> lock(queue_mutex_);
    if (closing_) return ready(failed("module closed"));
    Call call{event, std::move(args), {}};
    std::future<EventOutcome> f = call.reply.get_future();
    queue_.push_back(std::move(call));
    lock.unlock();
    queue_cv_.notify_one();
    return f;
  }

  std::shared_ptr<const rt::Snapshot> snapshot() const override { return visible()->snapshot; }
  uint64_t visible_sequence() const override { return visible()->sequence; }
  bool healthy() const override {
    std::lock_guard<std::mutex> lock(release_mutex_);
    return !poisoned_;
  }
  std::string unhealthy_reason() const override {
    std::lock_guard<std::mutex> lock(release_mutex_);
    return poison_reason_;
  }
  const RecoveryReport& recovery() const override { return report_; }

  Status checkpoint(CheckpointInfo* info) override {
    std::shared_ptr<const Published> p = visible();
    std::lock_guard<std::mutex> lock(checkpoint_write_mutex_);
    return write_checkpoint(fs_, dir_, options_.module_identity, *p->snapshot, p->sequence, log_.get(), info);
  }

  Status close() override {
    {
      std::lock_guard<std::mutex> lock(queue_mutex_);
      if (closed_) return close_status_;
      closed_ = true;
      closing_ = true;
    }
    queue_cv_.notify_one();
    if (owner_.joinable()) owner_.join();
    {
      std::lock_guard<std::mutex> lock(checkpoint_mutex_);
      checkpoint_stop_ = true;
    }
    checkpoint_cv_.notify_one();
    if (checkpointer_.joinable()) checkpointer_.join();
    if (log_) close_status_ = log_->close();  // the final burst releases the last batches
    std::lock_guard<std::mutex> lock(release_mutex_);
    for (Waiting& w : waiting_)
      for (auto& [reply, outcome] : w.replies) reply.set_value(failed("module closed before the event was durable"));
    waiting_.clear();
    return close_status_;
  }

 private:
  struct Call {
    uint32_t event;
    std::string args;
    std::promise<EventOutcome> reply;
  };
  // A batch the owner has run, waiting for the log to make events 1..needed durable.
  struct Waiting {
    uint64_t needed = 0;
    std::shared_ptr<const rt::Snapshot> snapshot;  // null when the batch committed nothing
    std::vector<std::pair<std::promise<EventOutcome>, EventOutcome>> replies;
  };

  void run_owner() {
    std::vector<Call> batch;
    std::vector<EventIn> committed;
    std::vector<size_t> committed_reply;  // which reply each committed event belongs to
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(queue_mutex_);
        queue_cv_.wait(lock, [&] { return !queue_.empty() || closing_; });
        if (queue_.empty()) return;
        batch.swap(queue_);
      }
      if (!healthy()) {
        std::string reason = "module unhealthy: " + unhealthy_reason();
        for (Call& c : batch) c.reply.set_value(failed(reason));
        batch.clear();
        continue;
      }
      Waiting w;
      committed.clear();
      committed_reply.clear();
      for (Call& c : batch) {
        EventOutcome outcome = options_.runner->run(*store_, c.event, c.args);
        if (outcome.ok) {
          committed.push_back({c.event, c.args});
          committed_reply.push_back(w.replies.size());
        }
        w.replies.emplace_back(std::move(c.reply), std::move(outcome));
      }
      if (!committed.empty()) {
        uint64_t last = log_->append(committed);
        if (last == 0) {
          // The store now holds events the log will never have: it must never be published.
          std::string reason = "module unhealthy: " + log_->poison_reason();
          for (auto& [reply, outcome] : w.replies) reply.set_value(failed(reason));
          batch.clear();
          continue;
        }
        uint64_t first = last - committed.size() + 1;
        for (size_t i = 0; i < committed.size(); ++i) w.replies[committed_reply[i]].second.sequence = first + i;
        w.needed = last;
        w.snapshot = store_->publish();
      } else {
        w.needed = log_->last_sequence();  // its failures saw the state of every event so far
      }
      batch.clear();
      {
        std::lock_guard<std::mutex> lock(release_mutex_);
        if (poisoned_) {
          // The log failed after the append: this batch will never be acknowledged.
          for (auto& [reply, outcome] : w.replies)
            reply.set_value(failed("not known to be durable (" + poison_reason_ + "); recovery after a restart decides"));
          continue;
        }
        waiting_.push_back(std::move(w));
        release_locked();
      }
      maybe_request_checkpoint();
    }
  }

  std::shared_ptr<const Published> visible() const {
    std::lock_guard<std::mutex> lock(visible_mutex_);
    return visible_;
  }
  void set_visible(std::shared_ptr<const Published> p) {
    std::shared_ptr<const Published> old;  // released outside the lock
    std::lock_guard<std::mutex> lock(visible_mutex_);
    old = std::move(visible_);
    visible_ = std::move(p);
  }

  void release(uint64_t durable) {
    std::lock_guard<std::mutex> lock(release_mutex_);
    durable_ = std::max(durable_, durable);
    release_locked();
  }

  // Publishes and answers every waiting batch that is durable now, oldest first.
  void release_locked() {
    while (!waiting_.empty() && waiting_.front().needed <= durable_ && !poisoned_) {
      Waiting& w = waiting_.front();
      if (w.snapshot) set_visible(std::make_shared<const Published>(Published{std::move(w.snapshot), w.needed}));
      for (auto& [reply, outcome] : w.replies) reply.set_value(std::move(outcome));
      waiting_.pop_front();
    }
  }

  void poison(const std::string& reason) {
    std::lock_guard<std::mutex> lock(release_mutex_);
    poisoned_ = true;
    poison_reason_ = reason;
    // Whether these reached the disk is unknown; a restart's recovery will say.
    for (Waiting& w : waiting_)
      for (auto& [reply, outcome] : w.replies)
        reply.set_value(failed("not known to be durable (" + reason + "); recovery after a restart decides"));
    waiting_.clear();
  }

  void maybe_request_checkpoint() {
    if (options_.checkpoint_log_bytes == 0) return;
    uint64_t bytes = log_->stats().bytes;
    std::lock_guard<std::mutex> lock(checkpoint_mutex_);
    if (checkpoint_requested_ || bytes - checkpoint_bytes_ < options_.checkpoint_log_bytes) return;
    checkpoint_requested_ = true;
    checkpoint_bytes_ = bytes;
    checkpoint_cv_.notify_one();
  }

  void run_checkpointer() {
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(checkpoint_mutex_);
        checkpoint_cv_.wait(lock, [&] { return checkpoint_requested_ || checkpoint_stop_; });
        if (checkpoint_stop_) return;
      }
      Status s = checkpoint(nullptr);  // a failed checkpoint loses nothing: the log holds every event
      std::lock_guard<std::mutex> lock(checkpoint_mutex_);
      checkpoint_requested_ = false;
      last_checkpoint_error_ = s.error;
    }
  }

  FileSystem& fs_;
  const std::string dir_;
  const ModuleOptions options_;
  std::unique_ptr<rt::Store> store_;  // the owner thread's
  std::unique_ptr<EventLog> log_;
  RecoveryReport report_;

  std::mutex queue_mutex_;
  std::condition_variable queue_cv_;
  std::vector<Call> queue_;
  bool closing_ = false;
  bool closed_ = false;
  Status close_status_;
  std::thread owner_;

  mutable std::mutex release_mutex_;
  std::deque<Waiting> waiting_;
  uint64_t durable_ = 0;
  bool poisoned_ = false;
  std::string poison_reason_;
  // The read path copies one shared_ptr under this lock (held for nothing else). Not
  // std::atomic<std::shared_ptr>: libstdc++ 12's unlocks with a relaxed store after reading the
  // pointer, which ThreadSanitizer rightly reports as a race with the next store.
  mutable std::mutex visible_mutex_;
  std::shared_ptr<const Published> visible_;

  std::mutex checkpoint_mutex_;
  std::condition_variable checkpoint_cv_;
  bool checkpoint_requested_ = false;
  bool checkpoint_stop_ = false;
  uint64_t checkpoint_bytes_ = 0;  // log bytes when the last checkpoint was requested
  std::string last_checkpoint_error_;
  std::mutex checkpoint_write_mutex_;
  std::thread checkpointer_;
};

}  // namespace

Status Module::open(FileSystem& fs, const std::string& dir, ModuleOptions options, std::unique_ptr<Module>* out) {
  if (!options.runner) return Status::failure(dir + ": a module needs an event runner");
  auto module = std::make_unique<ModuleImpl>(fs, dir, std::move(options));
  if (Status s = module->start(); !s.ok()) return s;
  *out = std::move(module);
  return {};
}

}  // namespace pure::host
