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

// Checkpoint transfer (docs/cluster.md, "Checkpoints and trimming"): a checkpoint is published in
// chunks of this many bytes (under NATS's default 1 MiB message limit); one larger than
// kClusterCheckpointMaxBytes is not published (a new node then reads the stream). The leader keeps
// the newest kClusterCheckpointsKept published checkpoints and trims the stream below the oldest
// of them, so a node installing the newest still finds the stream after it when one more is
// published meanwhile. A node installs a checkpoint in at most kClusterFetchTries attempts.
inline constexpr size_t kClusterCheckpointChunk = 256 * 1024;
inline constexpr uint64_t kClusterCheckpointMaxBytes = 1ull << 30;
inline constexpr size_t kClusterCheckpointsKept = 2;
inline constexpr int kClusterFetchTries = 5;

// Parses --cluster: nats://HOST:PORT[,nats://HOST:PORT...]. "" or why the text is not that.
std::string parse_servers(std::string_view text, std::vector<std::string>* out);

enum class Role : uint8_t {
  Follower,  // applies the stream; events answered 307 to the leader (503 while none is known)
  Leader,    // holds the lease; takes events, publishes each burst before acknowledging it
  Stopped,   // stopped leading (until its rejoin starts it again), diverged, or shut down
};
const char* role_name(Role role);

struct ReplicaStatus {
  Role role = Role::Follower;
  uint64_t applied = 0;        // events in this node's visible state (the owner's)
  uint64_t stream_events = 0;  // the last event sequence this node has seen in the stream (or published)
  uint64_t stream_messages = 0;  // stream messages (bursts) received or published
  uint64_t lag = 0;            // stream_events - applied
  uint64_t failovers = 0;      // leases this node has taken
  uint64_t rejoins = 0;        // times this node stopped leading and came back as a follower (no restart)
  uint64_t read_from = 0;      // the stream message this node's consumer started at (the first its log lacked; 0: none yet)
  uint64_t installed = 0;      // the sequence of the last checkpoint fetched from the cluster (0: none)
  uint64_t published = 0;      // checkpoints this node published (as leader)
  uint64_t trimmed_below = 0;  // the stream message this node last trimmed the stream below (0: never)
  std::string leader;          // the lease holder's node name ("": none known)
  std::string leader_url;      // its advertised HTTP base URL
  std::string failure;         // Stopped: why
};

using PublishReport = std::function<void(const std::string& why)>;

class Replica {
 public:
  virtual ~Replica() = default;
  // The owner's Durability: wraps the module's durable log (local). As leader, append() publishes
  // the burst to the stream (expected last sequence set), then hands it to local; as follower it
  // checks that what the owner appends is exactly the stream's next records. Called again for
  // each owner a rejoin builds (see start).
  virtual std::unique_ptr<host::Durability> wrap(std::unique_ptr<host::Durability> local) = 0;
  // Starts following (and campaigning for the lease) with the owner built over wrap()'s result.
  // After stop() it may be called again with a new owner: a leader that stopped leading rejoins as
  // a follower with an owner rebuilt from its own log (docs/cluster.md, "Rejoining").
  virtual void start(host::Owner* owner) = 0;
  // Stops the replica's thread; nothing more is submitted to the owner and the lease is no longer
  // renewed. Before owner->close().
  virtual void stop() = 0;
  // After stop() and owner->close(): a leader gives its lease up (compare-and-set on its revision
  // to an empty holder), so a follower takes it at its next look instead of after a whole lease.
  // Nothing when this node does not hold the lease (the compare-and-set fails). "released" or why
  // not, for the log.
  virtual std::string release() = 0;
  // After each checkpoint this node wrote (on the checkpoint thread; path: the file, through: its
  // sequence): a leader hands it to its publisher thread and returns at once (closing an owner
  // waits for its checkpoint thread, which so never waits for NATS). That thread publishes the
  // newest checkpoint handed over to the module's checkpoint stream in chunks, then keeps the
  // newest kClusterCheckpointsKept published checkpoints and trims the event stream below
  // the first message the oldest of them does not hold (docs/cluster.md, "Checkpoints and
  // trimming"); it stops between requests once this node no longer leads. A follower does
  // nothing. report: called on the publisher thread with why a publish failed, for the log.
  virtual void publish_checkpoint(const std::string& path, uint64_t through, PublishReport report) = 0;
  // Before start(): whether this node, whose log ends at local_last, must (or should) install the
  // newest published checkpoint instead of reading the stream: when its directory is empty and a
  // checkpoint is published, or when the stream no longer holds event local_last + 1 (trimmed). Then
  // *bytes is the checkpoint file, whole and its checksum checked, and *through its sequence; else
  // *through is 0. Failure: NATS did not answer, or no whole checkpoint could be read.
  virtual base::Status fetch_checkpoint(uint64_t local_last, std::string* bytes, uint64_t* through) = 0;
  // After a stop, before start(): whether it stopped because the stream was trimmed past its log
  // (behind the stream). Only then does a rejoin ask fetch_checkpoint: a leader that stopped
  // leading has a log the stream still continues (were it trimmed meanwhile, its consumer finds
  // the gap and it rejoins again, behind), and asking NATS while it moves to another server can
  // take seconds (docs/cluster.md, "Rejoining").
  virtual bool behind() const = 0;
  virtual ReplicaStatus status() const = 0;
  virtual bool leader() const = 0;
};

// Called at most once per start(), on any thread (the owner's, the replica's), when the replica
// stops: it must not block. rejoin true: it stopped leading (deposed, a publish refused or timed
// out, its lease not renewed in time); pure-serve rebuilds the module's owner from its own log
// (which holds only what the stream took) and calls start() again: it follows. rejoin false: the
// stream does not match this node's log (divergence); pure-serve shuts down with exit 5 and the
// reason, which a restart does not fix.
using OnStop = std::function<void(const std::string& reason, bool rejoin)>;

// Connects to the NATS cluster and makes (or finds) the module's stream and lease bucket. module:
// the module's name; identity: host::module_identity of its program (each burst carries it, and a
// follower refuses another module's). "" status or why not (the server, the NATS error).
base::Status open_replica(const ClusterOptions& options, const std::string& module, uint64_t identity, OnStop on_stop,
                          std::unique_ptr<Replica>* out);

}  // namespace pure::cluster
