// cluster/cluster.h — the interface of cluster/: one module replicated on NATS JetStream
// (docs/cluster.md). Per module a stream holds its event log (each message one durable burst of
// records in the log's own layout, host.h ShippedRecord) and a key-value bucket holds the leader's
// lease. The leader publishes each burst with the stream's expected last sequence before its own
// log writes it, so an event is acknowledged only once the stream has it (a quorum of the NATS
// cluster) and a deposed leader's publish fails. Followers consume the stream in order and submit
// its records to their own owner, whose log and state then match the leader's; when the lease
// lapses, a follower that has applied the whole stream takes it by compare-and-set.
// Depends on host/ (Durability, Owner) and on libnats, which only replica.cpp includes.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "host/owner.h"

namespace pure::cluster {

struct ClusterOptions {
  std::vector<std::string> servers;  // nats://HOST:PORT of the NATS cluster (any of its nodes)
  std::string node;                  // this node's name (unique in the cluster), held in the lease
  std::string advertise;             // this node's HTTP base URL ("http://HOST:PORT"): where followers redirect events
  int replicas = 3;                  // JetStream replicas of the stream and the lease bucket (1..5)
  uint64_t lease_ms = 3000;          // a lease not renewed for this long has lapsed (renewed every third of it)
};

// Parses --cluster: nats://HOST:PORT[,nats://HOST:PORT...]. "" or why the text is not that.
std::string parse_servers(std::string_view text, std::vector<std::string>* out);

enum class Role : uint8_t {
  Follower,  // applies the stream; events answered 307 to the leader (503 while none is known)
  Leader,    // holds the lease; takes events, publishes each burst before acknowledging it
  Stopped,   // deposed, diverged or stopped: takes and applies nothing more
};
const char* role_name(Role role);

struct ReplicaStatus {
  Role role = Role::Follower;
  uint64_t applied = 0;        // events in this node's visible state (the owner's)
  uint64_t stream_events = 0;  // the last event sequence this node has seen in the stream (or published)
  uint64_t stream_messages = 0;  // stream messages (bursts) received or published
  uint64_t lag = 0;            // stream_events - applied
  uint64_t failovers = 0;      // leases this node has taken
  std::string leader;          // the lease holder's node name ("": none known)
  std::string leader_url;      // its advertised HTTP base URL
  std::string failure;         // Stopped: why
};

class Replica {
 public:
  virtual ~Replica() = default;
  // The owner's Durability: wraps the module's durable log (local). As leader, append() publishes
  // the burst to the stream (expected last sequence set), then hands it to local; as follower it
  // checks that what the owner appends is exactly the stream's next records.
  virtual std::unique_ptr<host::Durability> wrap(std::unique_ptr<host::Durability> local) = 0;
  // Starts following (and campaigning for the lease) with the owner built over wrap()'s result.
  virtual void start(host::Owner* owner) = 0;
  // Stops the replica's thread; nothing more is submitted to the owner. Before owner->close().
  virtual void stop() = 0;
  virtual ReplicaStatus status() const = 0;
  virtual bool leader() const = 0;
};

// Called at most once per replica, on any thread, when it stops for good: its lease was taken
// (deposed), a publish failed, or the stream does not match its log. pure-serve logs the reason
// and shuts down (exit 5); restarted, it recovers its log and follows.
using OnFatal = std::function<void(const std::string& reason)>;

// Connects to the NATS cluster and makes (or finds) the module's stream and lease bucket. module:
// the module's name; identity: host::module_identity of its program (each burst carries it, and a
// follower refuses another module's). "" status or why not (the server, the NATS error).
base::Status open_replica(const ClusterOptions& options, const std::string& module, uint64_t identity, OnFatal on_fatal,
                          std::unique_ptr<Replica>* out);

}  // namespace pure::cluster
