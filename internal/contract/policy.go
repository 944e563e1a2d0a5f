// The policy scenarios' binding (Policy, Session, Config, Driver, Log), the
// suite that Policies runs, and the setup the scenarios share.

package contract

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/sim"
)

// Policy is what the scenarios read of an adapter's *Policy.
type Policy interface {
	Err() error
	Stats() []tailroute.HostStats
	Counters() tailroute.Counters
	Strategy() tailroute.Strategy
	LatencyQuantile(q float64) (time.Duration, bool)
}

// Session is one driver session, bound for the scenarios.
type Session struct {
	// Exec runs stmt with args; a non-nil key is set as the query's
	// routing key (Query.RoutingKey).
	Exec func(stmt string, key []byte, args ...any) error
	// Read scans the one text column of a one-row query.
	Read func(stmt string, args ...any) (string, error)
	// ReadFeedback runs stmt with args and gives the policy the response's
	// simulator payload feedback (internal/payload.Record).
	ReadFeedback func(stmt string, args ...any) error
	// TokenAware returns, per keyspace and key, the plan of the driver's
	// own TokenAwareHostPolicy over the policy's hosts with a fallback that
	// plans nothing, so the plan ends where the replicas end.
	TokenAware func() func(ks string, key []byte) []string
	// ExecSpeculative runs stmt with args as an idempotent query with the
	// driver's own SimpleSpeculativeExecution{NumAttempts: 1, TimeoutDelay:
	// delay}.
	ExecSpeculative func(stmt string, delay time.Duration, args ...any) error
	Close           func()
}

// Config is how a test wants its sessions: the keyspace the sessions use
// (ClusterConfig.Keyspace) and, when Log is set, a driver logger writing to
// it.
type Config struct {
	Keyspace string
	Log      *Log
}

// Driver binds one adapter and its driver for the scenarios.
type Driver struct {
	// New is the adapter's New.
	New func(opts ...tailroute.Option) (Policy, error)
	// Sessions wires p into one ClusterConfig for c (5s timeout, 10s
	// connect timeout, 200ms reconnect interval, quiet logger unless
	// cfg.Log) and returns the function that creates a session from it;
	// the test closes every session it created when it ends.
	Sessions func(t testing.TB, c *sim.Cluster, p Policy, cfg Config) func() (Session, error)
	// Plan is p's whole plan for a query on ks with routing key key (Pick,
	// then every host; each host then marked with success), as connect IPs.
	Plan func(p Policy, ks string, key []byte, idempotent bool) []string
	// Replicas is p's replica set for key in ks, as connect IPs; nil when
	// p does not route ks by token (yet).
	Replicas func(p Policy, ks string, key []byte) []string
	// NoConnections is the driver's ErrNoConnections.
	NoConnections error
	// ErrorCodes are the driver's ErrCodeServer, ErrCodeUnavailable,
	// ErrCodeOverloaded, ErrCodeBootstrapping, ErrCodeWriteTimeout,
	// ErrCodeReadTimeout, ErrCodeReadFailure, ErrCodeWriteFailure,
	// ErrCodeSyntax, ErrCodeUnauthorized, ErrCodeInvalid and
	// ErrCodeUnprepared, in this order.
	ErrorCodes []int
}

// Log is a driver logger's lines, as the bindings give them.
type Log struct {
	mu    sync.Mutex
	lines []string
}

// Add appends a line.
func (l *Log) Add(line string) {
	l.mu.Lock()
	l.lines = append(l.lines, line)
	l.mu.Unlock()
}

// Find returns the lines containing sub.
func (l *Log) Find(sub string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			out = append(out, s)
		}
	}
	return out
}

// Policies runs every policy scenario against d, each as a subtest.
func Policies(t *testing.T, d Driver) {
	run(t, d, []scenario[Driver]{
		{"StrategyRoundTrip", StrategyRoundTrip},
		{"ErrorCodesMatchDriver", ErrorCodesMatchDriver},
		{"ReplicaSetsMatchDriver", ReplicaSetsMatchDriver},
		{"WhatTokenAwarenessNeeds", WhatTokenAwarenessNeeds},
		{"SlowNode", SlowNode},
		{"PausedNode", PausedNode},
		{"NodeDownAndBack", NodeDownAndBack},
		{"LocalDCFirst", LocalDCFirst},
		{"UnknownLocalDC", UnknownLocalDC},
		{"SecondSessionRefused", SecondSessionRefused},
		{"SessionAfterClose", SessionAfterClose},
		{"DriverSpeculation", DriverSpeculation},
	})
}

func (d Driver) policy(t testing.TB, opts ...tailroute.Option) Policy {
	t.Helper()
	p, err := d.New(opts...)
	require.NoError(t, err)
	return p
}

// session opens one session of c through p.
func (d Driver) session(t testing.TB, c *sim.Cluster, p Policy, cfg Config) Session {
	t.Helper()
	s, err := d.Sessions(t, c, p, cfg)()
	require.NoError(t, err)
	return s
}

// createKeyspace creates ks with its usertable (y_id text PRIMARY KEY,
// field0 text) and waits until p routes by its tokens: the v2 driver
// refreshes its schema metadata about a second after a change (debounced)
// and only then tells the policy.
func (d Driver) createKeyspace(t testing.TB, s Session, p Policy, ks, replication string) {
	t.Helper()
	require.NoError(t, s.Exec("CREATE KEYSPACE IF NOT EXISTS "+ks+" WITH replication = "+replication, nil))
	require.NoError(t, s.Exec("CREATE TABLE IF NOT EXISTS "+ks+".usertable (y_id text PRIMARY KEY, field0 text)", nil))
	require.Eventually(t, func() bool { return len(d.Replicas(p, ks, []byte("k"))) > 0 },
		10*time.Second, 50*time.Millisecond, "keyspace %s routed by token", ks)
}
