// Package policy is tailroute's drop-in gocql.HostSelectionPolicy for
// github.com/gocql/gocql v1.7.0: it routes each request to the replica
// expected to answer fastest (C3, Suresh et al., NSDI'15, with the DataStax
// drivers' busy-node avoidance).
//
//	p, err := policy.New()             // C3; options from package tailroute
//	cluster := gocql.NewCluster(hosts...)
//	err = policy.Wire(cluster, p)      // policy + query/batch observers
//	session, err := cluster.CreateSession()
//	...
//	err = p.Err()                      // problems found while serving
//
// Options are those of package github.com/tailroute/tailroute, e.g.
// policy.New(tailroute.WithLocalDC("dc1"), tailroute.WithServerLoad(false)).
// The rules (query plan, the C3 score with its tail term and W_s, health,
// rate control, server load) and the defaults are specified in that
// package's doc, sections "Query plan", "The C3 score", "Health", "Rate
// control" and "Server load".
//
// A query is routed token-aware when it has bound ? markers (or a routing
// key) and a keyspace; otherwise it is ranked over a sample of local hosts
// (Counters.Unrouted). A Policy serves one session: Wire and Init refuse a
// second one while the first is open, and Err reports it, as it reports a
// local DC (tailroute.WithLocalDC) that no host is in (the policy then
// falls back rather than leave gocql with no host to try).
//
// Wire installs the policy as cluster.PoolConfig.HostSelectionPolicy and
// its observers as the QueryObserver and BatchObserver, which measure every
// attempt with its real error; without Wire the policy measures from Mark
// alone and cannot tell a success from a cancelled attempt. Hedging is
// package github.com/tailroute/tailroute/speculative (speculative.Wire after
// policy.Wire). Stats and Counters return snapshots (see
// github.com/tailroute/tailroute/policy/promstats for Prometheus).
//
// The hot path (Pick, NextHost, Mark) allocates nothing, for idempotent
// queries too (per-query state is pooled, reference counted while a
// speculative execution may still use it; see Pick), and takes no lock
// shared between hosts. Package github.com/tailroute/tailroute/apache/policy
// is the same policy for the Apache Cassandra Go driver v2; neither adapter
// builds the other's driver.
package policy
