// Package policy is tailroute's host selection policy for the Apache
// Cassandra Go driver v2 (github.com/apache/cassandra-gocql-driver/v2,
// tested with v2.1.2): the same policy as the gocql v1 adapter,
// github.com/tailroute/tailroute/policy, over the same driver-free engine.
// Importing this package never builds gocql v1.
//
//	p, err := policy.New()             // C3; options from package tailroute
//	cluster := gocql.NewCluster(hosts...)
//	err = policy.Wire(cluster, p)      // policy + query/batch observers
//	session, err := cluster.CreateSession()
//	...
//	err = p.Err()                      // problems found while serving
//
// Options are those of package github.com/tailroute/tailroute; the rules
// and defaults are specified in that package's doc ("Query plan", "The C3
// score", "Health", "Rate control", "Server load"). What differs is the
// driver:
//
//   - A query pinned to a host with Query.SetHostID runs on that host: the
//     v2 executor handles it without calling Pick (and never speculates
//     it); Pick, asked directly by a wrapper, plans that host alone, and an
//     unknown host ID gets an empty plan.
//   - v2 refreshes its schema metadata about a second after a change
//     (debounced) and tells the policy then; until that, queries of a new
//     keyspace are ranked over a sample of local hosts (Counters.Unrouted),
//     as the driver's own TokenAwareHostPolicy falls back to its fallback.
//   - Replica sets equal v2's TokenAwareHostPolicy's, except that v2.1.2
//     keeps gocql v1.7.0's bug of listing a host twice for
//     NetworkTopologyStrategy with vnodes, where ours follow Cassandra.
//   - Hedging for v2 is package
//     github.com/tailroute/tailroute/apache/speculative (Arm per query).
//     The driver's own speculative execution (a SpeculativeExecutionPolicy
//     on idempotent queries) works with this policy: set
//     tailroute.WithDriverSpeculation, or the policy stops pooling
//     idempotent plans by itself at the first late call it sees.
//   - Server-load polling (on by default with C3) pins each poll to its
//     host with Query.SetHostID instead of planning it in Pick.
//   - Logging goes to the ClusterConfig's StructuredLogger (Warning), else
//     to the standard log package.
package policy

// The files shared with the gocql v1 adapter are generated from it.
//go:generate go run ../../internal/v2gen
