// host/log_writer.cpp — the event log: the owner queues encoded records, the log thread writes
// every record queued so far as one burst, fdatasyncs once, then acknowledges the burst's last
// sequence number. With sync=none, where a burst is only a write(), the appending thread writes
// its burst itself when no other burst is in flight and no segment must roll. The first write or
// sync error poisons the log for good (no retry: after a failed fsync the kernel may have dropped
// the dirty pages, so a later successful fsync proves nothing). Depends on log_writer.h,
// log_format.h, file_io.h.
#include "host/log_writer.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "base/limits.h"
#include "host/log_format.h"
#include "host/manifest.h"

namespace pure::host {

namespace {

struct PendingRecord {
  size_t end;         // offset just past the record in the pending buffer
  uint64_t sequence;
  uint64_t time;      // its commit time
};

uint64_t system_clock_ms() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

class LogWriter final : public EventLog {
 public:
  LogWriter(FileSystem& fs, std::string dir, uint64_t module_identity, LogOptions options, DurableCallback on_durable,
            const LogStart& start)
      : fs_(fs),
        dir_(std::move(dir)),
        module_identity_(module_identity),
        options_(options),
        on_durable_(std::move(on_durable)),
        next_sequence_(start.next_sequence),
        last_sequence_(start.next_sequence - 1),
        durable_sequence_(start.next_sequence - 1),
        last_time_(start.last_time),
        segments_(start.segments),
        manifest_(fs, dir_, ManifestState{module_identity, start.checkpoint_sequence,
                                          start.segments.empty() ? 0 : start.segments.back().first_sequence,
                                          start.next_sequence - 1}) {}

  ~LogWriter() override { (void)close(); }  // a caller that cares closes first and reads the status

  // Opens or creates the segment the first burst goes to; runs before the thread starts.
  // The manifest is written here too (by the roll, or as it stands), so a directory from before
  // manifests has one from its first start on.
  Status begin(const LogStart& start) {
    if (!start.segments.empty()) {
      // What recovery read of the last segment may be only in the page cache (a killed process
      // with sync=none): sync it before the manifest promises it.
      std::string path = join_path(dir_, start.segments.back().name);
      std::unique_ptr<File> last;
      if (Status s = fs_.open(path, OpenMode::ReadWrite, &last); !s.ok()) return s;
      if (Status s = last->datasync(); !s.ok()) return s;
      if (start.continue_last) {
        active_ = std::move(last);
        active_path_ = path;
        active_size_ = start.last_end;
      }
    }
    if (active_) {
      if (Status s = manifest_.write(); !s.ok()) return s;
    } else if (Status s = roll(next_sequence_); !s.ok()) {
      return s;
    }
    thread_ = std::thread([this] { run(); });
    return {};
  }

  uint64_t append(std::span<const EventIn> events) override {
    if (events.empty()) return 0;
    std::unique_lock<std::mutex> lock(mutex_);
    if (poisoned_ || closing_) return 0;
    // One commit time for the call; never before the last one (a wall clock stepped back holds).
    last_time_ = std::max(last_time_, options_.clock ? options_.clock() : system_clock_ms());
    for (const EventIn& e : events) {
      if (record_bytes(e.args.size(), e.key.size(), e.result.size(), kLogVersion, e.failed) > kMaxRecordLength)
        throw std::length_error("event log: encoded arguments of " + std::to_string(e.args.size()) + " bytes");
      encode_record(pending_, next_sequence_, e.event, e.args, last_time_, kLogVersion, e.key, e.result, e.failed);
      pending_records_.push_back({pending_.size(), next_sequence_, last_time_});
      last_sequence_ = next_sequence_++;
    }
    uint64_t last = last_sequence_;
    // sync=none: a burst is only a write(), so the appending thread writes it itself when no
    // burst is being written and it needs no new segment (a roll syncs: the log thread's work).
    // That saves waking the log thread and its reply for every batch.
    if (options_.sync == Sync::None && !writing_ && active_size_ + pending_.size() <= options_.segment_bytes) {
      writing_ = true;
      inline_burst_.swap(pending_);  // both keep their capacity for later bursts
      inline_records_.swap(pending_records_);
      lock.unlock();
      write_taken(inline_burst_, inline_records_);
      inline_burst_.clear();
      inline_records_.clear();
      return last;
    }
    lock.unlock();
    work_.notify_one();
    return last;
  }

  bool wait_durable(uint64_t sequence) override {
    std::unique_lock<std::mutex> lock(mutex_);
    durable_.wait(lock, [&] { return durable_sequence_ >= sequence || poisoned_ || thread_done_; });
    return durable_sequence_ >= sequence;
  }

  uint64_t durable_sequence() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return durable_sequence_;
  }
  uint64_t last_sequence() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_sequence_;
  }
  bool poisoned() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return poisoned_;
  }
  std::string poison_reason() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return poison_reason_;
  }
  LogStats stats() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
  }

  Status close() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (closed_) return poisoned_ ? Status::failure(poison_reason_) : Status{};
      closed_ = true;
      closing_ = true;
    }
    work_.notify_one();
    if (thread_.joinable()) thread_.join();
    // sync=none: a clean close still leaves everything on disk.
    if (options_.sync == Sync::None && active_ && !poisoned()) {
      if (Status s = timed_sync(*active_); !s.ok()) poison(s.error);
    }
    active_.reset();
    std::lock_guard<std::mutex> lock(mutex_);
    return poisoned_ ? Status::failure(poison_reason_) : Status{};
  }

  Status retire_history(uint64_t through) override {
    const Retention& retain = options_.retain;
    const uint64_t now = options_.clock ? options_.clock() : system_clock_ms();
    // The older checkpoints, with their sizes: history too.
    std::vector<std::string> names;
    if (Status s = fs_.list_dir(dir_, &names); !s.ok()) return s;
    std::vector<std::pair<uint64_t, uint64_t>> checkpoints;  // sequence, bytes; oldest first
    for (const std::string& name : names) {
      auto seq = parse_checkpoint_name(name);
      if (!seq || *seq >= through) continue;
      uint64_t bytes = 0;
      std::unique_ptr<File> f;
      if (fs_.open(join_path(dir_, name), OpenMode::Read, &f).ok()) (void)f->size(&bytes);
      checkpoints.emplace_back(*seq, bytes);
    }
    std::sort(checkpoints.begin(), checkpoints.end());

    std::vector<std::string> doomed, doomed_checkpoints;
    uint64_t oldest_kept = 0;  // the first sequence of the oldest segment left
    {
      std::lock_guard<std::mutex> lock(mutex_);
      // Segment i holds sequences first(i) .. first(i+1)-1; the last segment is being written.
      size_t covered = 0;
      while (covered + 1 < segments_.size() && segments_[covered + 1].first_sequence - 1 <= through) ++covered;
      uint64_t history = 0;
      for (size_t i = 0; i < covered; ++i) history += segments_[i].bytes;
      for (const auto& c : checkpoints) history += c.second;
      // A segment's end time: the first known commit time after it (times never go back).
      std::vector<uint64_t> end_time(covered, 0);
      uint64_t later = 0;
      for (size_t i = segments_.size(); i-- > 1;) {
        if (segments_[i].first_time) later = segments_[i].first_time;
        if (i - 1 < covered) end_time[i - 1] = later;
      }
      size_t drop = 0;
      while (drop < covered) {
        bool aged = retain.keep_ms == 0 ||
                    (retain.keep_ms != Retention::kForever && end_time[drop] && now - std::min(now, end_time[drop]) > retain.keep_ms);
        bool too_big = retain.keep_bytes != Retention::kForever && history > retain.keep_bytes;
        if (!aged && !too_big) break;
        history -= segments_[drop].bytes;
        doomed.push_back(segments_[drop].name);
        ++drop;
      }
      oldest_kept = segments_[drop].first_sequence;
      // Checkpoints: one whose next record is gone cannot be replayed forward; of the others,
      // the oldest (where the retained log replays from) and the limits::kHistoryCheckpoints
      // newest stay, unless the size bound says otherwise (oldest first).
      size_t useful = 0;
      while (useful < checkpoints.size() && checkpoints[useful].first + 1 < oldest_kept) ++useful;
      std::vector<bool> keep(checkpoints.size(), false);
      for (size_t i = useful; i < checkpoints.size(); ++i)
        keep[i] = retain.keep_ms != 0 && (i == useful || checkpoints.size() - i <= limits::kHistoryCheckpoints);
      for (size_t i = 0; i < checkpoints.size(); ++i) {
        bool too_big = retain.keep_bytes != Retention::kForever && history > retain.keep_bytes;
        if (keep[i] && !too_big) continue;
        history -= checkpoints[i].second;
        doomed_checkpoints.push_back(checkpoint_name(checkpoints[i].first));
      }
    }
    // Segments oldest first, each deletion made durable before the next (unsynced directory
    // changes may survive a crash in any order), so what is left never has a gap; one leaves
    // segments_ only once deleted, so a failed deletion is tried again at the next checkpoint.
    // Checkpoints after the segments (one a crash leaves orphaned goes at the next checkpoint).
    for (const std::string& name : doomed) {
      if (Status s = fs_.unlink(join_path(dir_, name)); !s.ok()) return s;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!segments_.empty() && segments_.front().name == name) segments_.erase(segments_.begin());
      }
      if (Status s = fs_.sync_dir(dir_); !s.ok()) return s;
    }
    if (!doomed_checkpoints.empty()) {
      for (const std::string& name : doomed_checkpoints)
        if (Status s = fs_.unlink(join_path(dir_, name)); !s.ok()) return s;
      if (Status s = fs_.sync_dir(dir_); !s.ok()) return s;
    }
    return {};
  }

  Status record_checkpoint(uint64_t through) override { return manifest_.checkpoint_written(through); }

 private:
  void run() {
    std::string burst;
    std::vector<PendingRecord> records;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        work_.wait(lock, [&] { return (!pending_.empty() || closing_) && !writing_; });
        if (pending_.empty()) break;
        writing_ = true;
        burst.swap(pending_);
        records.swap(pending_records_);
        pending_.clear();
        pending_records_.clear();
      }
      if (!write_taken(burst, records)) break;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    thread_done_ = true;
    durable_.notify_all();
  }

  // Writes (and with sync=always syncs) a burst taken from pending_ by whoever set writing_,
  // then acknowledges it (or the poisoning) before clearing writing_, so that acknowledgements
  // come in order and none follows the poisoning. False when the log is poisoned.
  bool write_taken(const std::string& burst, const std::vector<PendingRecord>& records) {
    Status s = write_burst(burst, records);
    if (s.ok() && options_.sync == Sync::Always) s = timed_sync(*active_);
    if (!s.ok()) {
      poison(s.error);
      finish_writing();
      return false;
    }
    uint64_t durable = records.back().sequence;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      durable_sequence_ = durable;
      stats_.records += records.size();
      stats_.bursts += 1;
      stats_.bytes += burst.size();
    }
    durable_.notify_all();
    if (on_durable_) on_durable_(durable, false, std::string());
    finish_writing();
    return true;
  }

  void finish_writing() {
    bool more;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      writing_ = false;
      more = !pending_.empty() || closing_;
    }
    if (more) work_.notify_one();  // records queued meanwhile go to the log thread (or close waits for it)
  }

  // Writes the burst, rolling to a new segment where the next record would pass the bound.
  Status write_burst(const std::string& burst, const std::vector<PendingRecord>& records) {
    size_t index = 0;
    size_t start = 0;
    while (index < records.size()) {
      uint64_t room = options_.segment_bytes > active_size_ ? options_.segment_bytes - active_size_ : 0;
      size_t end = index;
      while (end < records.size() && records[end].end - start <= room) ++end;
      if (end == index) {
        if (active_size_ > kSegmentHeaderBytes) {
          if (Status s = roll(records[index].sequence); !s.ok()) return s;
          continue;
        }
        end = index + 1;  // a record larger than a segment goes alone into one
      }
      size_t bytes = records[end - 1].end - start;
      if (Status s = active_->write_at(active_size_, burst.data() + start, bytes); !s.ok()) return s;
      if (active_size_ == kSegmentHeaderBytes) {
        std::lock_guard<std::mutex> lock(mutex_);
        segments_.back().first_time = records[index].time;  // retention ages the segment before by it
      }
      active_size_ += bytes;
      start = records[end - 1].end;
      index = end;
    }
    return {};
  }

  // Finishes the active segment (synced even with sync=none, so only the last segment of a log
  // can ever end torn) and starts a new one whose first record is first_sequence.
  Status roll(uint64_t first_sequence) {
    if (active_) {
      if (Status s = timed_sync(*active_); !s.ok()) return s;
      active_.reset();
      std::lock_guard<std::mutex> lock(mutex_);
      if (!segments_.empty()) segments_.back().bytes = active_size_;  // sealed: its size is history's
    }
    std::string name = segment_name(first_sequence);
    std::string path = join_path(dir_, name);
    std::unique_ptr<File> file;
    if (Status s = fs_.open(path, OpenMode::Create, &file); !s.ok()) return s;
    std::string header = encode_segment_header(module_identity_, first_sequence);
    if (Status s = file->write_at(0, header.data(), header.size()); !s.ok()) return s;
    if (Status s = file->datasync(); !s.ok()) return s;
    if (Status s = fs_.sync_dir(dir_); !s.ok()) return s;
    // The manifest names the new segment before it becomes the active one in segments_: until
    // then drop_segments_through keeps the old one, which the manifest on disk still names.
    if (Status s = manifest_.segment_started(first_sequence); !s.ok()) return s;
    active_ = std::move(file);
    active_path_ = path;
    active_size_ = header.size();
    std::lock_guard<std::mutex> lock(mutex_);
    if (!segments_.empty() && segments_.back().name == name) segments_.pop_back();  // an empty one, made again
    segments_.push_back({first_sequence, name, 0, 0});
    stats_.segments_created += 1;
    stats_.bytes += header.size();
    return {};
  }

  // One fdatasync of a segment, its time counted in stats_.
  Status timed_sync(File& file) {
    auto started = std::chrono::steady_clock::now();
    Status s = file.datasync();
    uint64_t us = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started).count());
    size_t b = 0;
    while (b < kSyncBoundsUs.size() && us > kSyncBoundsUs[b]) ++b;
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.syncs += 1;
    stats_.sync_us_total += us;
    stats_.sync_buckets[b] += 1;
    return s;
  }

  void poison(const std::string& reason) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (poisoned_) return;
      poisoned_ = true;
      poison_reason_ = "event log poisoned: " + reason;
      pending_.clear();
      pending_records_.clear();
    }
    durable_.notify_all();
    if (on_durable_) on_durable_(durable_sequence(), true, poison_reason());
  }

  FileSystem& fs_;
  const std::string dir_;
  const uint64_t module_identity_;
  const LogOptions options_;
  const DurableCallback on_durable_;

  mutable std::mutex mutex_;
  std::condition_variable work_;     // the log thread waits for records
  std::condition_variable durable_;  // wait_durable waits for acknowledgements
  std::string pending_;              // encoded records queued since the last burst began
  std::vector<PendingRecord> pending_records_;
  uint64_t next_sequence_;
  uint64_t last_sequence_;
  uint64_t durable_sequence_;
  uint64_t last_time_;  // the last commit time stamped (times never go back)
  bool poisoned_ = false;
  bool closing_ = false;
  bool closed_ = false;
  bool thread_done_ = false;
  // A burst is being written (by the log thread, or with sync=none by an appender): the other
  // waits. Whoever sets it owns active_, active_path_ and active_size_ until it clears it.
  bool writing_ = false;
  std::string poison_reason_;
  std::vector<SegmentRef> segments_;
  LogStats stats_;
  ManifestWriter manifest_;  // its own lock; rolls (log thread) and checkpoints (any thread) update it

  // The burst writer's (see writing_; begin()/close() before and after the log thread runs).
  std::string inline_burst_;  // the burst an appender writes itself (sync=none), while writing_
  std::vector<PendingRecord> inline_records_;
  std::unique_ptr<File> active_;
  std::string active_path_;
  uint64_t active_size_ = 0;
  std::thread thread_;
};

}  // namespace

Status start_log(FileSystem& fs, const std::string& dir, uint64_t module_identity, const LogOptions& options,
                 DurableCallback on_durable, const LogStart& start, std::unique_ptr<EventLog>* out) {
  auto log = std::make_unique<LogWriter>(fs, dir, module_identity, options, std::move(on_durable), start);
  if (Status s = log->begin(start); !s.ok()) return s;
  *out = std::move(log);
  return {};
}

}  // namespace pure::host
