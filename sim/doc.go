// Package sim is a simulated Cassandra cluster that speaks the CQL native
// protocol (v3 and v4, frames and messages from
// github.com/datastax/go-cassandra-native-protocol), so that the real gocql
// driver, the real network stack and our routing policies run end to end
// against it, in one process (Start) or one node per process/container
// (StartNode, command cqlsim).
//
// # Use
//
// In a test, start a cluster on loopback (node K listens on 127.0.0.K and
// advertises that address), point the driver at it, and change a node's
// model or inject a fault while the test runs:
//
//	c, err := sim.Start(ctx, sim.Config{Nodes: 3})
//	defer c.Close() // stops every node; no goroutine is left
//	cluster := gocql.NewCluster(c.Hosts()...)
//	cluster.Port = c.Port()
//	m := c.Nodes()[2].Model()
//	m.Slowdown = 5 // node 3 serves 5x slower
//	err = c.Nodes()[2].SetModel(m)
//	c.Nodes()[1].Pause(200 * time.Millisecond) // a stop-the-world pause
//
// # What a node answers
//
//   - OPTIONS, STARTUP (no compression), REGISTER (topology, status and
//     schema events; SCHEMA_CHANGE is pushed after DDL, STATUS_CHANGE on
//     Node.Stop/Restart).
//   - system.local and system.peers with each node's own rpc_address
//     (127.0.0.K), host_id, data_center, rack, tokens, release_version 3.11.4
//     (so gocql never asks for peers_v2, which answers Invalid) and a
//     schema_version derived from the schema content.
//   - system_schema.keyspaces/tables/columns from the live schema;
//     views/types/functions/aggregates/indexes/triggers as empty results of
//     the right shape. Equality filters and LIMIT work on all of them.
//   - system_views.thread_pools as Cassandra 4.0 has it (name, active_tasks,
//     active_tasks_limit, pending_tasks, completed_tasks, blocked_tasks,
//     blocked_tasks_all_time), each node answering for itself from its queue
//     model: rows ReadStage (SELECTs) and MutationStage (writes) with
//     pending = queued requests, active = requests in service,
//     active_tasks_limit = W (the workers are shared by both stages),
//     completed = served since the node (re)started; the virtual keyspaces
//     are described in system_virtual_schema.keyspaces/tables/columns, not
//     in system_schema (as in Cassandra 4.0). Node.SetVirtualTables(false)
//     makes a node answer Invalid there, like Cassandra 3.x.
//   - USE, CREATE KEYSPACE [IF NOT EXISTS] with SimpleStrategy or
//     NetworkTopologyStrategy, CREATE TABLE [IF NOT EXISTS], DROP, TRUNCATE.
//   - On tables with one partition-key column and no clustering columns
//     (YCSB's usertable: y_id text PRIMARY KEY, field0..fieldN text):
//     INSERT, UPDATE (upsert), DELETE (row or columns), SELECT * / columns /
//     count(*) by key, and token-range scans
//     (WHERE token(y_id) >= token(?) [AND token(y_id) < ...] LIMIT n),
//     unprepared (literals or bound values) and prepared. Prepared results
//     carry the partition-key index, so gocql computes routing keys.
//   - Result paging: SELECTs honour the request's page size and return a
//     paging state while rows remain; the same statement with that state
//     continues after the last row sent (token scans resume by token and
//     key, system tables by row offset; count(*) is one row, never paged).
//   - Tracing is not recorded: a request with the tracing flag is served
//     normally, its answer carries no tracing session id (gocql and the
//     DataStax Python driver then report no trace) and, in protocol v4, the
//     server warning "sim: tracing is not supported by the simulator ...".
//   - Anything else gets a CQL error (SyntaxError, Invalid, ConfigError,
//     AlreadyExists, Unauthorized, Unprepared, ProtocolError or ServerError);
//     no request is left unanswered and internal panics become ServerError.
//
// # Protocol versions
//
// A node serves v3 and v4. A frame in any other version is answered as
// Cassandra 3.11 (the release_version the nodes report) answers it, and
// the connection is closed: a ProtocolError on stream 0, in v1/v2 for those
// versions, in v5 for v5 ("Beta version of the protocol used (5/v5-beta),
// but USE_BETA flag is unset") and for unknown versions ("Invalid or
// unsupported protocol version (N); supported versions are (3/v3, 4/v4)").
// Drivers that negotiate by stepping down from their highest version
// (cassandra-gocql-driver v2 from v5, the DataStax Python driver from
// DSE v2) so reach v4 by themselves; gocql 1.x starts at v4. Unlike
// Cassandra 3.11, the simulator does not serve v5-beta to a client that
// sets USE_BETA (it answers a ProtocolError saying so), and its version
// lists name only v3 and v4.
//
// # Connections
//
// Each client connection has its own reader, its own writer and a write
// queue bounded in bytes (Config.WriteQueueBytes, 16 MiB): nothing that
// answers or pushes events waits on a client, and a client that stops
// reading is disconnected once its queue is full (NodeStats.Dropped)
// instead of delaying broadcasts, workers, other clients or Node.Stop.
// A request frame longer than Config.MaxFrameSize (16 MiB, Cassandra's
// native_transport_max_frame_size) is answered with a ProtocolError and
// its body skipped unread; a length inside a body that exceeds the frame
// is a ProtocolError too, so no declared length is ever allocated.
// Node.Stop closes the node's client connections first and the other
// nodes announce STATUS_CHANGE DOWN Config.DownDelay (500ms) later, as
// gossip would: drivers such as the Python one ignore a DOWN for a host
// they still hold open connections to.
//
// # Placement and storage
//
// Tokens are Murmur3 (Murmur3Token, identical to Cassandra and gocql): with
// Config.VNodes = 1 node i owns MinInt64 + i*ceil(2^64/N), otherwise VNodes random
// tokens per node from Config.Seed. Replicas follow Cassandra's placement
// (SimpleStrategy ring walk; NTS per DC with Cassandra's rack-aware walk).
// gocql's TokenAwareHostPolicy agrees with it except that gocql v1.7.0 can
// list one host twice in an NTS replica set when nodes have several vnodes
// (the simulator does not copy that). The router's own placement
// (internal/core.Ring.Replicas) is pinned to this one by
// TestPlacementMatchesPolicyCore for SimpleStrategy and NetworkTopologyStrategy. Each node has its own in-memory store; a
// write is applied to every replica's store when the coordinator serves it
// (in-process directly, across processes over the peers' admin endpoints).
// Scans merge all nodes' stores.
//
// # Coordinators and replicas
//
// A single-partition SELECT whose coordinator is one of the partition's
// replicas is executed by the coordinator. Otherwise the coordinator
// forwards it to one replica, which executes it through its own
// ServiceModel (queue, workers, slowdown, fluctuation, pauses, injected
// errors) and counts it in its NodeStats (Served or Errors, Windows) and
// its ReadStage; the coordinator counts it in NodeStats.Forwarded only. The
// coordinator spends no service time on a forwarded read (Cassandra's
// coordinator work for it is network and a little CPU) but forwards it and
// relays the answer only while not paused. The replica is chosen as
// Cassandra 4.0's DynamicEndpointSnitch orders replicas for CL ONE, per
// coordinator: the subsnitch order is the ring order (SimpleSnitch); each
// forwarded read's latency (forward to answer) is a sample of its replica,
// the last 100 per replica are kept, scores are their medians recomputed
// every 100 ms (dynamic_snitch_update_interval) and dropped every 600 s
// (dynamic_snitch_reset_interval); a replica without samples scores 0; the
// first replica in ring order is used unless, at some position of the ring
// order, the replica there scores more than 1.1 times the replica at that
// position by score (dynamic_snitch_badness_threshold 0.1): then the best
// scoring one. Not
// modelled: the snitch's severity term and its sampling of other message
// types, read repair, speculative retry (rapid read protection), digest
// reads to further replicas. Only running replicas are candidates; with
// none the coordinator answers Unavailable. The coordinator's own injected
// overloaded or unavailable errors are answered before forwarding (its
// injected read_timeout does not apply to forwarded reads). A replica's
// injected error (overloaded, unavailable or read_timeout) or full queue
// reaches the client as ReadTimeout from the coordinator, at once
// (Cassandra's coordinator would wait read_request_timeout, 5 s, for an
// overloaded replica), and counts as a 5 s sample in the snitch, as
// Cassandra samples an expired request.
//
// # Network between zones
//
// Without Config.Network the nodes answer as fast as loopback carries
// (today's default). With it, each node is in its zone (DC, rack) and each
// client connection in the zone of the address it connects from
// (Cluster.ClientAddr(zone): a client binds its dialer to 127.255.0.K to
// be in the K-th node zone; any other address is in Network.Client,
// default the first node's zone). Every data request and its answer take
// a one-way delay per hop, drawn per message as the pair's base delay
// (Network.SameRack, OtherRack, OtherDC; defaults 50us, 500us, 30ms, as
// within an availability zone, between zones of a cloud region and
// between regions) times 1 + Jitter*u, u uniform in [-1, 1) (default
// Jitter 0.2): client to coordinator, coordinator to replica and back for
// a forwarded read (the snitch times a replica from the read's arrival at
// the coordinator to its answer's return there), coordinator to client.
// The delays are served where they cost no timer: a request is queued at
// once but not served before its arrival (one arriving more than 2ms
// later, from another DC, is queued on arrival), and the worker that
// served it holds it until its answer has travelled back, sleeping on a
// precise clock (a Go timer wakes on whole milliseconds on Linux, which
// would swallow a 50us hop; a nanosleep overshoots by about 0.1ms), so a
// node's workers are also timed precisely with a Network. An error
// answered at admission travels the same way. Not delayed: control
// traffic (STARTUP, system and schema tables, system_views polls, events),
// writes from coordinator to the other replicas (applied directly, see
// above), and anything with ZeroService models. Cluster.Traffic counts
// per (client zone, node zone) the data requests, all request frames and
// the bytes received from and sent to clients, whatever the delay;
// inter-node traffic is not counted.
//
// # Service-time model (C3 paper, section 6)
//
// Only data requests (non-system tables) pass through a ServiceModel, that
// of the node executing them (the coordinator, or the replica a
// non-replica coordinator forwards a single-partition read to, see above):
// a FIFO queue served by W workers, exponential service times with mean
// 1/mu (MeanService) times Slowdown, bimodal fluctuation (every T each node
// independently serves at mu or mu/D), periodic and one-off stop-the-world
// pauses (Node.Pause) and injected errors (overloaded and unavailable are
// answered at once, read_timeout after service). System and schema queries
// are answered immediately, except system_views during a pause: a stopped
// JVM reports no load either, so a thread_pools poll waits for the pause's
// end. Workers time service on a virtual clock so the
// ~1 ms timer granularity of Linux never lowers a node's rate. Stats gives
// served/error totals, queue length, in-flight count and requests served
// per 100 ms window; Oracle gives the instantaneous queue length and mean
// service time. With Config.Feedback every data response carries
// PayloadQueueLen and PayloadServiceTime in the CQL custom payload.
//
// # Limits
//
//   - Protocol v3/v4 only (other versions are refused as above), no compression, no
//     authentication, no tracing, no BATCH, no
//     lightweight transactions (IF [NOT] EXISTS on data), no TTL (USING TTL
//     and TIMESTAMP are parsed and ignored), no secondary indexes, no
//     clustering or composite partition keys; consistency levels are
//     accepted and ignored (every write reaches all live replicas, a read
//     uses one replica).
//   - Writes, TRUNCATE and token-range scans are executed by the
//     coordinator alone: they pass through its ServiceModel only, and the
//     other replicas' stores are updated without charging their queues.
//   - In process mode (StartNode, one node per process) a read whose
//     replicas include a remote peer is not forwarded: the coordinator
//     executes it through its own ServiceModel and reads the row from a
//     replica over the admin endpoint without charging that replica.
//   - A stopped node keeps receiving replica writes in-process (its store
//     stays current); in process mode a write to an unreachable replica is
//     lost for that replica, and DDL forwarding is best effort (a peer that
//     misses it reports a different schema_version).
//   - The simulator never is the bottleneck: with ZeroService one node
//     serves >100k simple reads/s from gocql on 2 cores
//     (BenchmarkGocqlReads).
package sim
