// -driver v2: the run phase through the Apache Cassandra Go driver v2
// (github.com/apache/cassandra-gocql-driver/v2) instead of gocql v1. The
// schema is created through gocql v1 (plain DDL); every client session,
// policy and query of the measured phases goes through v2.

package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	gocql2 "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/tailroute/tailroute/apache/policy"
	"github.com/tailroute/tailroute/sim"
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

// observerV2 feeds the host counter and the attempt windows from the v2
// driver's query observer, after the policy's own.
type observerV2 struct {
	next     gocql2.QueryObserver
	counter  *hostCounter
	attempts *attemptWindows
}

func (o *observerV2) ObserveQuery(ctx context.Context, q gocql2.ObservedQuery) {
	if o.next != nil {
		o.next.ObserveQuery(ctx, q)
	}
	if q.Host == nil || policy.IsServerLoadPoll(ctx) {
		return // polls of server load are not user requests
	}
	ip := q.Host.ConnectAddress().String()
	o.counter.count(ip)
	o.attempts.record(ip, q.Start)
}

// openClientsV2 is openClients through the v2 driver.
func (r *runner) openClientsV2(name string, cl *sim.Cluster, hosts []string, port int, fields []string) (clients []*client, closeAll func(), err error) {
	o := r.o
	install, err := lookupV2(name)
	if err != nil {
		return nil, nil, err
	}
	var cleanup []func()
	closeAll = func() {
		for i := len(cleanup) - 1; i >= 0; i-- {
			cleanup[i]()
		}
	}
	clients = make([]*client, o.clients)
	for c := range clients {
		cfg := r.clusterConfigV2(hosts, port)
		cfg.Keyspace = o.keyspace
		inst, err := install(policyEnv{cluster: cl, seed: o.seed + int64(c), rf: o.rf, clients: o.clients, client: c, localDC: o.localDC, tailTerm: o.tailTerm}, cfg)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		counter := newHostCounter(nil)
		attempts := &attemptWindows{}
		cfg.QueryObserver = &observerV2{next: cfg.QueryObserver, counter: counter, attempts: attempts}
		sess, err := cfg.CreateSession()
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("connecting to %v with policy %s (driver v2): %w", hosts, name, err)
		}
		cleanup = append(cleanup, sess.Close)
		db := newCQLDB(nil, o.keyspace, o.cfg.Table, fields, o.consistency)
		cons := gocql2.Consistency(o.consistency)
		arm, feedback := inst.arm, inst.feedback
		db.run = func(ctx context.Context, stmt string, args []any) error {
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
		clients[c] = &client{inst: inst.installed, counter: counter, db: db, attempts: attempts}
	}
	return clients, closeAll, nil
}

// errorKindV2 names the v2 driver's errors as errorKind names gocql v1's.
func errorKindV2(err error) string {
	var re gocql2.RequestError
	switch {
	case errors.Is(err, gocql2.ErrTimeoutNoResponse):
		return "client_timeout"
	case errors.Is(err, gocql2.ErrNoConnections) || errors.Is(err, gocql2.ErrConnectionClosed):
		return "no_connection"
	case errors.As(err, &re):
		switch re.Code() {
		case gocql2.ErrCodeOverloaded:
			return "overloaded"
		case gocql2.ErrCodeUnavailable:
			return "unavailable"
		case gocql2.ErrCodeReadTimeout:
			return "read_timeout"
		case gocql2.ErrCodeWriteTimeout:
			return "write_timeout"
		}
		return fmt.Sprintf("server_0x%04x", re.Code())
	}
	return "other"
}
