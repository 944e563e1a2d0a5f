// -driver v2: the run phase through the Apache Cassandra Go driver v2
// (github.com/apache/cassandra-gocql-driver/v2) instead of gocql v1. The
// schema is created through gocql v1 (plain DDL); every client session,
// policy and query of the measured phases goes through v2.

package main

import (
	"context"
	"net"
	"time"

	gocql2 "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/tailroute/tailroute/apache/policy"
)

// clusterConfigV2 is clusterConfig for the v2 driver: the protocol version
// is negotiated (the driver steps down from v5) unless -proto-version says.
func (r *runner) clusterConfigV2(hosts []string, port int) *gocql2.ClusterConfig {
	o := r.o
	cfg := gocql2.NewCluster(hosts...)
	cfg.Port = port
	cfg.Consistency = gocql2.Consistency(o.consistency)
	cfg.Timeout = o.timeout
	cfg.ConnectTimeout = o.connectTimeout
	cfg.ProtoVersion = o.protoVersion
	if o.username != "" {
		cfg.Authenticator = gocql2.PasswordAuthenticator{Username: o.username, Password: o.password}
	}
	if o.tls != nil {
		cfg.SslOpts = &gocql2.SslOptions{Config: o.tls, EnableHostVerification: !o.tls.InsecureSkipVerify}
	}
	cfg.ReconnectInterval = time.Second
	cfg.NumConns = 2
	if o.retries > 0 {
		cfg.RetryPolicy = &gocql2.SimpleRetryPolicy{NumRetries: o.retries}
	}
	cfg.Logger = quietV2{}
	return cfg
}

// quietV2 drops the v2 driver's log lines (as the v1 sessions' io.Discard).
type quietV2 struct{}

func (quietV2) Error(string, ...gocql2.LogField)   {}
func (quietV2) Warning(string, ...gocql2.LogField) {}
func (quietV2) Info(string, ...gocql2.LogField)    {}
func (quietV2) Debug(string, ...gocql2.LogField)   {}

// observerV2 feeds a client's host counter and attempt windows from the v2
// driver's query observer, after the policy's own; polls of server load
// are not user requests.
type observerV2 struct {
	next gocql2.QueryObserver
	c    *client
}

func (o observerV2) ObserveQuery(ctx context.Context, q gocql2.ObservedQuery) {
	if o.next != nil {
		o.next.ObserveQuery(ctx, q)
	}
	if q.Host == nil || policy.IsServerLoadPoll(ctx) {
		return
	}
	ip := q.Host.ConnectAddress().String()
	o.c.counter.count(ip)
	o.c.attempts.record(ip, q.Start)
}

// v2Driver binds github.com/apache/cassandra-gocql-driver/v2:
// clusterConfigV2 configures its sessions, and cqlDB runs statements
// through run, with the hedger's Arm and the payload feedback when the
// policy has them.
var v2Driver = binding[*gocql2.ClusterConfig]{
	note:    " (driver v2)",
	config:  (*runner).clusterConfigV2,
	install: func(s policySpec) func(policyEnv, *gocql2.ClusterConfig) (installed, error) { return s.v2 },
	dial:    func(cfg *gocql2.ClusterConfig, d *net.Dialer) { cfg.Dialer = d },
	open: func(cfg *gocql2.ClusterConfig, c *client) (func(), error) {
		cfg.Keyspace, cfg.QueryObserver = c.db.ks, observerV2{next: cfg.QueryObserver, c: c}
		sess, err := cfg.CreateSession()
		if err != nil {
			return nil, err
		}
		cons := gocql2.Consistency(c.db.cl)
		arm, feedback := c.inst.arm, c.inst.feedbackV2
		c.db.run = func(ctx context.Context, stmt string, args []any) error {
			q := sess.Query(stmt, args...).Consistency(cons).Idempotent(true)
			if arm != nil {
				ctx = arm(ctx, q)
			}
			if feedback == nil {
				return q.ExecContext(ctx)
			}
			iter := q.IterContext(ctx)
			feedback(iter)
			return iter.Close()
		}
		return sess.Close, nil
	},
}
