package main

import (
	"context"
	"net"

	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute/policy"
)

// v1Driver binds gocql v1 (github.com/gocql/gocql), the default:
// clusterConfig (run.go) configures its sessions and cqlDB runs statements
// on them, reading payload feedback when the policy asks.
var v1Driver = binding[*gocql.ClusterConfig]{
	config:  (*runner).clusterConfig,
	install: func(s policySpec) func(policyEnv, *gocql.ClusterConfig) (installed, error) { return s.v1 },
	dial:    func(cfg *gocql.ClusterConfig, d *net.Dialer) { cfg.Dialer = d },
	open: func(cfg *gocql.ClusterConfig, c *client) (func(), error) {
		cfg.Keyspace, cfg.QueryObserver = c.db.ks, observerV1{next: cfg.QueryObserver, c: c}
		sess, err := cfg.CreateSession()
		if err != nil {
			return nil, err
		}
		c.db.s, c.db.feedback = sess, c.inst.feedback
		return sess.Close, nil
	},
}

// observerV1 feeds a client's host counter and attempt windows from gocql
// v1's query observer, after the policy's own.
type observerV1 struct {
	next gocql.QueryObserver
	c    *client
}

func (o observerV1) ObserveQuery(ctx context.Context, q gocql.ObservedQuery) {
	if o.next != nil {
		o.next.ObserveQuery(ctx, q)
	}
	if q.Host == nil {
		return
	}
	ip := q.Host.ConnectAddress().String()
	if !policy.IsServerLoadPoll(ctx) { // polls of server load are not user requests
		o.c.counter.count(ip)
	}
	o.c.attempts.record(ip, q.Start)
}
