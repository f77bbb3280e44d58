// serve/api_metrics.cpp — pure-serve's metrics: the counters every answer adds to (requests
// by route and status, the event and query latency histograms) and GET /metrics, which writes
// them with each module's and the process's figures in Prometheus' text format (api.h).
#include "serve/api.h"

#include <fstream>
#include <unistd.h>

#include "stdlib/numtext.h"
#include "serve/api_internal.h"

namespace pure::serve {

using Clock = std::chrono::steady_clock;

namespace {

uint64_t resident_bytes() {
  std::ifstream in("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return 0;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// A Prometheus label value: backslash, double quote and line feed escaped.
std::string label_value(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

}  // namespace

void Api::Latency::add(uint64_t us) {
  size_t b = 0;
  while (b < kBoundsUs.size() && us > kBoundsUs[b]) ++b;
  buckets[b].fetch_add(1, std::memory_order_relaxed);
  count.fetch_add(1, std::memory_order_relaxed);
  sum_us.fetch_add(us, std::memory_order_relaxed);
}

size_t Api::status_index(int status) {
  for (size_t i = 0; i + 1 < kStatuses.size(); ++i)
    if (kStatuses[i] == status) return i;
  return kStatuses.size() - 1;  // any other status
}

void Api::count(Route route, int status, uint64_t micros) {
  requests_[static_cast<size_t>(route)][status_index(status)].fetch_add(1, std::memory_order_relaxed);
}

std::string Api::metrics() const {
  std::string out;
  auto line = [&](const std::string& name, const std::string& labels, uint64_t value) {
    out += name;
    if (!labels.empty()) out += "{" + labels + "}";
    out += ' ';
    out += std::to_string(value);
    out += '\n';
  };
  out += "# HELP pure_requests_total HTTP requests answered, by route and status.\n# TYPE pure_requests_total counter\n";
  for (size_t r = 0; r < static_cast<size_t>(Route::kCount); ++r)
    for (size_t s = 0; s < kStatuses.size(); ++s) {
      uint64_t v = requests_[r][s].load(std::memory_order_relaxed);
      if (v == 0) continue;
      std::string status = kStatuses[s] ? std::to_string(kStatuses[s]) : "other";
      line("pure_requests_total", std::string("route=\"") + route_label(static_cast<Route>(r)) + "\",status=\"" + status + "\"", v);
    }
  auto histogram = [&](const char* name, const char* help, const Latency& h) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " histogram\n";
    uint64_t cumulative = 0;
    for (size_t b = 0; b < h.buckets.size(); ++b) {
      cumulative += h.buckets[b].load(std::memory_order_relaxed);
      std::string le;
      if (b < Latency::kBoundsUs.size()) {
        le = numtext::format_num(static_cast<double>(Latency::kBoundsUs[b]) / 1e6);
      } else {
        le = "+Inf";
      }
      out += std::string(name) + "_bucket{le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
    }
    char sum[64];
    std::snprintf(sum, sizeof sum, "%.6f", static_cast<double>(h.sum_us.load()) / 1e6);
    out += std::string(name) + "_sum " + sum + "\n";
    out += std::string(name) + "_count " + std::to_string(h.count.load()) + "\n";
  };
  histogram("pure_event_seconds", "Time from an event request to its reply (durable), seconds.", event_latency_);
  histogram("pure_query_seconds", "Time to answer a query request, seconds.", query_latency_);
  out += "# HELP pure_queries_running Queries running on the query threads.\n# TYPE pure_queries_running gauge\n"
         "pure_queries_running " + std::to_string(queries_.running()) + "\n";
  out += "# HELP pure_queries_cancelled_total Queries cancelled while running: past --query-timeout-ms (timeout), or their "
         "client gone (client_gone).\n# TYPE pure_queries_cancelled_total counter\n"
         "pure_queries_cancelled_total{reason=\"timeout\"} " + std::to_string(cancelled_timeout_.load()) + "\n"
         "pure_queries_cancelled_total{reason=\"client_gone\"} " + std::to_string(cancelled_client_gone_.load()) + "\n";
  out += "# HELP pure_queries_queued Queries waiting for a query thread.\n# TYPE pure_queries_queued gauge\n"
         "pure_queries_queued " + std::to_string(queries_.queued()) + "\n";
  out += "# HELP pure_query_threads The query threads (--query-threads).\n# TYPE pure_query_threads gauge\n"
         "pure_query_threads " + std::to_string(queries_.threads()) + "\n";
  // Per module, from the owner and its durability; a module still recovering has no owner yet and
  // reports only pure_module_healthy 0 and its recovery progress.
  std::vector<std::pair<const Module*, host::OwnerStats>> served;
  for (const Module* m : modules_)
    if (m->serving()) served.emplace_back(m, m->owner()->stats());
  auto per_module = [&](const char* name, const char* help, const char* type, auto get) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
    for (auto& [m, s] : served) line(name, "module=\"" + m->name + "\"", get(s, *m));
  };
  out += "# HELP pure_events_total Events by outcome: committed (durable), failed (rolled back), unavailable (refused), replayed (a retry answered from its Idempotency-Key), key_reused (its key committed other arguments: 422).\n"
         "# TYPE pure_events_total counter\n";
  for (auto& [m, s] : served) {
    std::string mod = "module=\"" + m->name + "\"";
    line("pure_events_total", mod + ",outcome=\"committed\"", s.committed);
    line("pure_events_total", mod + ",outcome=\"failed\"", s.failed);
    line("pure_events_total", mod + ",outcome=\"unavailable\"", s.unavailable);
    line("pure_events_total", mod + ",outcome=\"replayed\"", s.replayed);
    line("pure_events_total", mod + ",outcome=\"key_reused\"", s.key_reused);
  }
  per_module("pure_batches_total", "Batches the owner ran (each: the events that had arrived).", "counter",
             [](const host::OwnerStats& s, const Module&) { return s.batches; });
  per_module("pure_queue_events", "Events waiting for the owner.", "gauge",
             [](const host::OwnerStats& s, const Module&) { return s.queued; });
  per_module("pure_visible_sequence", "Sequence number of the last event visible to queries.", "gauge",
             [](const host::OwnerStats& s, const Module&) { return s.visible_sequence; });
  per_module("pure_memory_bytes",
             "Bytes held against the module's memory budget: its state and structure (events and queries add what "
             "they allocate while they run).",
             "gauge", [](const host::OwnerStats& s, const Module&) { return s.memory_bytes; });
  per_module("pure_memory_budget_bytes", "The module's memory budget (--max-memory).", "gauge",
             [](const host::OwnerStats& s, const Module&) { return s.memory_budget; });
  per_module("pure_state_bytes", "Bytes the stored rows need (cells and texts).", "gauge",
             [](const host::OwnerStats& s, const Module&) { return s.state_bytes; });
  per_module("pure_structure_bytes", "Bytes of store structure beyond the rows (nodes, slack, pools).", "gauge",
             [](const host::OwnerStats& s, const Module&) { return s.structure_bytes; });
  per_module("pure_snapshots_held",
             "Distinct snapshots the host holds: the visible one, those of batches waiting to be durable, one a "
             "checkpoint is written from when no longer visible (not those queries hold while they run).",
             "gauge", [](const host::OwnerStats& s, const Module&) { return s.snapshots_held + s.durability.snapshots_held; });
  per_module("pure_log_records_total", "Events written to the log.", "counter",
             [](const host::OwnerStats& s, const Module&) { return s.durability.log.records; });
  per_module("pure_log_bursts_total", "Log bursts (group commits: one write run and, with --sync always, one fdatasync).",
             "counter", [](const host::OwnerStats& s, const Module&) { return s.durability.log.bursts; });
  per_module("pure_log_bytes_total", "Bytes appended to log segments, headers included.", "counter",
             [](const host::OwnerStats& s, const Module&) { return s.durability.log.bytes; });
  per_module("pure_log_segments_created_total", "Log segments created.", "counter",
             [](const host::OwnerStats& s, const Module&) { return s.durability.log.segments_created; });
  out += "# HELP pure_fsync_seconds fdatasync of log segments (each burst with --sync always, each roll, close), seconds.\n"
         "# TYPE pure_fsync_seconds histogram\n";
  for (auto& [m, s] : served) {
    const host::LogStats& l = s.durability.log;
    std::string mod = "module=\"" + m->name + "\"";
    uint64_t cumulative = 0;
    for (size_t b = 0; b < l.sync_buckets.size(); ++b) {
      cumulative += l.sync_buckets[b];
      std::string le = b < host::kSyncBoundsUs.size()
                           ? numtext::format_num(static_cast<double>(host::kSyncBoundsUs[b]) / 1e6)
                           : std::string("+Inf");
      out += "pure_fsync_seconds_bucket{" + mod + ",le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
    }
    char sum[64];
    std::snprintf(sum, sizeof sum, "%.6f", static_cast<double>(l.sync_us_total) / 1e6);
    out += "pure_fsync_seconds_sum{" + mod + "} " + sum + "\n";
    out += "pure_fsync_seconds_count{" + mod + "} " + std::to_string(l.syncs) + "\n";
  }
  out += "# HELP pure_checkpoints_total Checkpoints this process wrote, by outcome (a failed one loses nothing).\n"
         "# TYPE pure_checkpoints_total counter\n";
  for (auto& [m, s] : served) {
    std::string mod = "module=\"" + m->name + "\"";
    line("pure_checkpoints_total", mod + ",outcome=\"written\"", s.durability.checkpoints);
    line("pure_checkpoints_total", mod + ",outcome=\"failed\"", s.durability.checkpoint_failures);
  }
  per_module("pure_checkpoint_sequence", "The newest checkpoint holds events 1..this (0: none).", "gauge",
             [](const host::OwnerStats& s, const Module&) { return s.durability.checkpoint_sequence; });
  out += "# HELP pure_checkpoint_age_seconds Seconds since the newest checkpoint was written (or found at start); "
         "absent when there is none.\n# TYPE pure_checkpoint_age_seconds gauge\n";
  for (auto& [m, s] : served) {
    if (s.durability.checkpoint_age_seconds < 0) continue;
    char age[64];
    std::snprintf(age, sizeof age, "%.3f", s.durability.checkpoint_age_seconds);
    out += "pure_checkpoint_age_seconds{module=\"" + m->name + "\"} " + age + "\n";
  }
  out += "# HELP pure_recovery_records Log records replayed by the start's recovery (so far, while recovering).\n"
         "# TYPE pure_recovery_records gauge\n";
  for (const Module* m : modules_) line("pure_recovery_records", "module=\"" + m->name + "\"", m->recovery_records.load());
  out += "# HELP pure_recovery_seconds Seconds the start's recovery took.\n# TYPE pure_recovery_seconds gauge\n";
  for (auto& [m, s] : served) {
    char secs[64];
    std::snprintf(secs, sizeof secs, "%.6f", m->recovery.seconds);
    out += "pure_recovery_seconds{module=\"" + m->name + "\"} " + secs + "\n";
  }
  out += "# HELP pure_module_healthy 1 when the module takes events; 0 while recovering, after its recovery failed or "
         "after its log failed.\n"
         "# TYPE pure_module_healthy gauge\n";
  for (const Module* m : modules_)
    line("pure_module_healthy", "module=\"" + m->name + "\"", m->serving() && m->owner()->healthy() ? 1 : 0);
  out += "# HELP pure_module_unhealthy 1 for each module that takes no events, with its state (failed: its data "
         "directory did not recover; unhealthy: its log failed) and the reason.\n"
         "# TYPE pure_module_unhealthy gauge\n";
  for (const Module* m : modules_) {
    auto [state, reason] = module_state(*m);
    if (!reason.empty())
      line("pure_module_unhealthy",
           "module=\"" + m->name + "\",state=\"" + state + "\",reason=\"" + label_value(reason) + "\"", 1);
  }
  // --cluster (docs/cluster.md)
  bool clustered = false;
  for (auto& [m, s] : served) clustered = clustered || m->replica != nullptr;
  if (clustered) {
    out += "# HELP pure_cluster_leader 1 when this node leads the module (holds its lease), 0 when it follows or stopped.\n"
           "# TYPE pure_cluster_leader gauge\n";
    std::vector<std::pair<const Module*, cluster::ReplicaStatus>> rs;
    for (auto& [m, s] : served)
      if (m->replica) rs.emplace_back(m, m->replica->status());
    for (auto& [m, r] : rs)
      line("pure_cluster_leader", "module=\"" + m->name + "\",role=\"" + cluster::role_name(r.role) + "\"",
           r.role == cluster::Role::Leader ? 1 : 0);
    out += "# HELP pure_cluster_applied_sequence The last event applied on this node (in its visible state).\n"
           "# TYPE pure_cluster_applied_sequence gauge\n";
    for (auto& [m, r] : rs) line("pure_cluster_applied_sequence", "module=\"" + m->name + "\"", r.applied);
    out += "# HELP pure_cluster_stream_sequence The last event this node has seen in the stream (or published).\n"
           "# TYPE pure_cluster_stream_sequence gauge\n";
    for (auto& [m, r] : rs) line("pure_cluster_stream_sequence", "module=\"" + m->name + "\"", r.stream_events);
    out += "# HELP pure_cluster_lag_events Events received from the stream and not yet applied here.\n"
           "# TYPE pure_cluster_lag_events gauge\n";
    for (auto& [m, r] : rs) line("pure_cluster_lag_events", "module=\"" + m->name + "\"", r.lag);
    out += "# HELP pure_cluster_leases_taken_total Leases this node has taken (failovers to it) since it started.\n"
           "# TYPE pure_cluster_leases_taken_total counter\n";
    for (auto& [m, r] : rs) line("pure_cluster_leases_taken_total", "module=\"" + m->name + "\"", r.failovers);
    out += "# HELP pure_cluster_rejoins_total Times this node stopped leading and became a follower again in-process.\n"
           "# TYPE pure_cluster_rejoins_total counter\n";
    for (auto& [m, r] : rs) line("pure_cluster_rejoins_total", "module=\"" + m->name + "\"", r.rejoins);
  }
  if (options_.backup_every_ms != 0) {
    out += "# HELP pure_scheduled_backups_total Scheduled backups (--backup-every): written, failed (a backup or "
           "a pruning; the log says why), and pruned (deleted past --backup-keep).\n"
           "# TYPE pure_scheduled_backups_total counter\n";
    line("pure_scheduled_backups_total", "outcome=\"written\"", scheduled_written_.load());
    line("pure_scheduled_backups_total", "outcome=\"failed\"", scheduled_failed_.load());
    line("pure_scheduled_backups_total", "outcome=\"pruned\"", scheduled_pruned_.load());
  }
  out += "# HELP pure_connections Open HTTP connections.\n# TYPE pure_connections gauge\n";
  line("pure_connections", "", static_cast<uint64_t>(std::max<int64_t>(0, connections_.load())));
  if (const host::MemoryPool* pool = options_.memory_pool.get()) {
    out += "# HELP pure_memory_total_bytes Bytes all modules' states hold against --max-memory-total.\n"
           "# TYPE pure_memory_total_bytes gauge\n";
    line("pure_memory_total_bytes", "", pool->held.load());
    out += "# HELP pure_memory_total_budget_bytes The memory budget of all modules together (--max-memory-total).\n"
           "# TYPE pure_memory_total_budget_bytes gauge\n";
    line("pure_memory_total_budget_bytes", "", pool->limit);
  }
  out += "# HELP pure_resident_bytes Resident memory of the process.\n# TYPE pure_resident_bytes gauge\n";
  line("pure_resident_bytes", "", resident_bytes());
  out += "# HELP pure_uptime_seconds Seconds since the server started.\n# TYPE pure_uptime_seconds gauge\n";
  line("pure_uptime_seconds", "",
       static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - started_).count()));
  return out;
}

}  // namespace pure::serve
