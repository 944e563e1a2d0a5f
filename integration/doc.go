// Package integration holds the Docker end-to-end suites: simulated nodes
// (cmd/cqlsim packaged FROM scratch by docker/Dockerfile, built by the tests
// themselves, nothing pulled) run as containers on a Docker network of the
// test's own, and real gocql with tailroute's policy connects to them.
//
// Addressing: node K publishes its CQL port on 127.0.S.(100+K):9042 and its
// admin endpoint on 127.0.S.(100+K):7070, and advertises 127.0.S.(100+K) in
// system.local/system.peers, so gocql only ever dials loopback; S (1..250)
// comes from the test process's PID, so runs from several worktrees on one
// machine do not share addresses. The nodes forward writes and DDL to each
// other over the Docker network (cqlsim -cluster members written
// ip@alias:adminport).
//
// Scenarios:
//
//	TestFiveNodes       discovery from one contact point; reads of six keys
//	                    (RF 2) land only on each key's replicas (node /stats);
//	                    docker pause of one replica (RF 3) for 2 s under 16
//	                    readers: no read fails, new attempts to it stop within
//	                    400 ms, p95 and slow share far below token-aware
//	                    round robin's in the same test
//	TestThreeNodeFaults discovery; a node slowed 25x through POST /model loses
//	                    its share; docker stop: reads keep succeeding; docker
//	                    start: the node serves reads again within 45 s
//	TestRealCassandra   discovery and the pause scenario against a real
//	                    Cassandra image (TAILROUTE_CASSANDRA_IMAGE, present
//	                    locally; otherwise skipped with a message)
//
// Without Docker the tests skip with a message, unless
// TAILROUTE_REQUIRE_DOCKER=1 (set by .ci/run), which makes that a failure.
// Containers and networks are labelled with the test process's PID and
// always removed, also after a failed or interrupted earlier run; a run
// never removes those of another run that is still alive.
package integration
