// Command cqlsim runs the simulated CQL cluster of package sim.
//
// Cluster mode (default) starts N nodes in this process on FirstIP..+N-1,
// all on one port:
//
//	cqlsim -nodes 5 -dcs 1 -mean-service 4ms -workers 4
//
// Node mode (-advertise set) runs one node per process or container. Every
// process gets the same -cluster member list and admin port, and its own
// -advertise address:
//
//	cqlsim -cluster 10.0.0.2/dc1/rack1,10.0.0.3/dc1/rack1,10.0.0.4/dc1/rack1 \
//	       -advertise 10.0.0.3 -listen 0.0.0.0 -port 9042 -admin-port 7070
//
// A member is ip[/dc[/rack[/token;token...]]]; members without tokens get the
// evenly split token of their position in the list. Writes are forwarded to
// replica peers and DDL to all peers over the admin port.
//
// Sized flags out of their range (-nodes 1..64, -dcs 1..nodes, -racks
// 1..64, -vnodes 1..256, ...) are errors naming the flag and the range.
// Client connections: -max-frame-size (16 MiB, Cassandra's
// native_transport_max_frame_size) caps a request frame, -write-queue-bytes
// (16 MiB) bounds the responses queued for a client before one that does
// not read is disconnected, -down-delay (500ms) is how long after a node
// stops (its connections closed) the others announce it DOWN.
//
// Every flag can also be set from the environment as CQLSIM_<FLAG> with
// dashes turned into underscores (CQLSIM_ADVERTISE=10.0.0.3); flags win.
//
// On start cqlsim prints one line per node (address, dc, rack, tokens,
// admin URL) and then a line "cqlsim ready hosts=<ip,...> port=<port>".
// Each node's admin endpoint serves GET /stats, GET|POST /model (one JSON
// object, partial updates, durations as "4ms", a given 0 is a value), POST /pause?for=300ms, POST /stop|/restart.
// SIGINT/SIGTERM stop everything.
package main
