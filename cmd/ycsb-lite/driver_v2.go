// -driver v2: the run phase through the Apache Cassandra Go driver v2
// (github.com/apache/cassandra-gocql-driver/v2) instead of gocql v1. The
// schema is created through gocql v1 (plain DDL); every client session,
// policy and query of the measured phases goes through v2.

package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	gocql2 "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/tailroute/tailroute/apache/policy"
	"github.com/tailroute/tailroute/sim"
)

// Drivers -driver accepts.
const (
	driverV1 = "v1"
	driverV2 = "v2"
)

// policiesV2 are the policies -driver v2 can run, by the names of their v1
// counterparts: tailroute's strategies through apache/policy (tailroute+poll
// with polled server load, pinned with SetHostID), and the v2 driver's own
// token-aware and round-robin policies.
var policiesV2 = map[string]func(env policyEnv, cfg *gocql2.ClusterConfig) (installed, error){
	"tailroute":              tailrouteV2(policy.C3, true, 0),
	"tailroute" + pollSuffix: tailrouteV2(policy.C3, true, policy.DefaultServerLoadInterval),
	"tailroute-p2c":          tailrouteV2(policy.P2C, true, 0),
	"tailroute-norate":       tailrouteV2(policy.C3, false, 0),
	"token-aware": func(env policyEnv, cfg *gocql2.ClusterConfig) (installed, error) {
		cfg.PoolConfig.HostSelectionPolicy = gocql2.TokenAwareHostPolicy(roundRobinV2(env.localDC))
		return installed{}, nil
	},
	"round-robin": func(env policyEnv, cfg *gocql2.ClusterConfig) (installed, error) {
		cfg.PoolConfig.HostSelectionPolicy = roundRobinV2(env.localDC)
		return installed{}, nil
	},
}

// policyNamesV2 lists the policies of -driver v2.
func policyNamesV2() []string {
	names := make([]string, 0, len(policiesV2))
	for n := range policiesV2 {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// checkDriver validates -driver against the chosen policies.
func checkDriver(driver string, policies []string) error {
	switch driver {
	case driverV1:
		return nil
	case driverV2:
		for _, p := range policies {
			if policiesV2[p] == nil {
				return &flagError{fmt.Sprintf("-driver v2 runs the policies %s; not %q", strings.Join(policyNamesV2(), ", "), p)}
			}
		}
		return nil
	}
	return badFlag("driver", driver, "v1 (github.com/gocql/gocql) or v2 (github.com/apache/cassandra-gocql-driver/v2)")
}

func roundRobinV2(localDC string) gocql2.HostSelectionPolicy {
	if localDC != "" {
		return gocql2.DCAwareRoundRobinPolicy(localDC)
	}
	return gocql2.RoundRobinHostPolicy()
}

func tailrouteV2(s policy.Strategy, rate bool, poll time.Duration) func(env policyEnv, cfg *gocql2.ClusterConfig) (installed, error) {
	return func(env policyEnv, cfg *gocql2.ClusterConfig) (installed, error) {
		opts := []policy.Option{policy.WithStrategy(s), policy.WithRateControl(rate)}
		if env.clients > 1 {
			opts = append(opts, policy.WithConcurrencyWeight(float64(env.clients)))
		}
		if env.localDC != "" {
			opts = append(opts, policy.WithLocalDC(env.localDC))
		}
		if poll > 0 {
			opts = append(opts, policy.WithServerLoad(poll))
		}
		p, err := policy.New(opts...)
		if err != nil {
			return installed{}, err
		}
		if err := policy.Wire(cfg, p); err != nil {
			return installed{}, err
		}
		inst := installed{stats: func() any { return p.Stats() }}
		if poll > 0 {
			inst.stats = func() any {
				return map[string]any{"hosts": p.Stats(), "server_load": p.ServerLoadCounters()}
			}
		}
		return inst, nil
	}
}

// clusterConfigV2 is clusterConfig for the v2 driver. The embedded
// simulator speaks protocol v3/v4 and v2.1.2 does not step down from v5 on
// its answer, so the embedded cluster gets v4 unless -proto-version says.
func (r *runner) clusterConfigV2(hosts []string, port int) *gocql2.ClusterConfig {
	o := r.o
	cfg := gocql2.NewCluster(hosts...)
	cfg.Port = port
	cfg.Consistency = gocql2.Consistency(o.consistency)
	cfg.Timeout = o.timeout
	cfg.ConnectTimeout = o.connectTimeout
	cfg.ProtoVersion = o.protoVersion
	if cfg.ProtoVersion == 0 && o.hosts == nil {
		cfg.ProtoVersion = 4
	}
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
	install := policiesV2[name]
	if install == nil {
		return nil, nil, fmt.Errorf("policy %s has no -driver v2 variant (%s)", name, strings.Join(policyNamesV2(), ", "))
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
		inst, err := install(policyEnv{cluster: cl, seed: o.seed + int64(c), rf: o.rf, clients: o.clients, client: c, localDC: o.localDC}, cfg)
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
		db.run = func(ctx context.Context, stmt string, args []any) error {
			return sess.Query(stmt, args...).WithContext(ctx).Consistency(cons).Idempotent(true).Exec()
		}
		clients[c] = &client{inst: inst, counter: counter, db: db, attempts: attempts}
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
