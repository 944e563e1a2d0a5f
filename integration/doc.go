// Package integration holds the Docker end-to-end suites: simulated nodes
// (cmd/cqlsim packaged FROM scratch by docker/Dockerfile, built by the tests
// themselves, nothing pulled) run as containers on a Docker network of the
// test's own, and real gocql with tailroute's policy connects to them.
//
// Addressing: node K publishes its CQL port on 127.0.0.(100+K):9042 and its
// admin endpoint on 127.0.0.(100+K):7070, and advertises 127.0.0.(100+K) in
// system.local/system.peers, so gocql only ever dials loopback; the nodes
// forward writes and DDL to each other over the Docker network.
//
// Faults: docker pause/unpause (a frozen node), docker stop/start (a dead
// node), and the simulator's admin endpoint (a slow node).
//
// Without Docker the tests skip with a message, unless
// TAILROUTE_REQUIRE_DOCKER=1 (set by .ci/run), which makes that a failure.
// TAILROUTE_CASSANDRA_IMAGE names a real Cassandra image already present
// locally to run the discovery and pause scenarios against; otherwise those
// cases skip. Containers are labelled and always removed, also after a
// failed or interrupted earlier run.
package integration
