package policy

import (
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/require"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/contract"
	"github.com/tailroute/tailroute/internal/payload"
	"github.com/tailroute/tailroute/sim"
)

// TestContract runs the adapter contract suite (internal/contract) on this
// adapter's driver. What differs between the drivers is in driver_test.go.
func TestContract(t *testing.T) {
	contract.Policies(t, contract.Driver{
		New: func(opts ...tailroute.Option) (contract.Policy, error) { return New(opts...) },
		Sessions: func(t testing.TB, c *sim.Cluster, p contract.Policy, cfg contract.Config) func() (contract.Session, error) {
			var log driverLogger = quietLogger{}
			if cfg.Log != nil {
				log = logTo(cfg.Log)
			}
			cl := simConfig(t, c, p.(*Policy), log)
			cl.Keyspace = cfg.Keyspace
			return func() (contract.Session, error) {
				s, err := cl.CreateSession()
				if err != nil {
					return contract.Session{}, err
				}
				t.Cleanup(s.Close)
				return bind(s, p.(*Policy)), nil
			}
		},
		Plan: func(p contract.Policy, ks string, key []byte, idempotent bool) []string {
			next := p.(*Policy).Pick(&fakeQuery{key: key, ks: ks, idempotent: idempotent})
			var ips []string
			var hs []gocql.SelectedHost
			for h := next(); h != nil; h = next() {
				ips = append(ips, h.Info().ConnectAddress().String())
				hs = append(hs, h)
			}
			for _, h := range hs {
				h.Mark(nil)
			}
			return ips
		},
		Replicas:      func(p contract.Policy, ks string, key []byte) []string { return p.(*Policy).replicaIPs(ks, key) },
		NoConnections: gocql.ErrNoConnections,
		ErrorCodes: []int{gocql.ErrCodeServer, gocql.ErrCodeUnavailable, gocql.ErrCodeOverloaded, gocql.ErrCodeBootstrapping,
			gocql.ErrCodeWriteTimeout, gocql.ErrCodeReadTimeout, gocql.ErrCodeReadFailure, gocql.ErrCodeWriteFailure,
			gocql.ErrCodeSyntax, gocql.ErrCodeUnauthorized, gocql.ErrCodeInvalid, gocql.ErrCodeUnprepared},
	})
}

// bind is s as the contract suite uses it.
func bind(s *gocql.Session, p *Policy) contract.Session {
	return contract.Session{
		Exec: func(stmt string, key []byte, args ...any) error {
			q := s.Query(stmt, args...)
			if key != nil {
				q = q.RoutingKey(key)
			}
			return q.Exec()
		},
		Read: func(stmt string, args ...any) (v string, err error) {
			err = s.Query(stmt, args...).Scan(&v)
			return v, err
		},
		ReadFeedback: func(stmt string, args ...any) error {
			iter := s.Query(stmt, args...).Iter()
			payload.Record(p, iter.Host(), iter.GetCustomPayload())
			return iter.Close()
		},
		TokenAware: func() func(ks string, key []byte) []string {
			tap := gocql.TokenAwareHostPolicy(markerFallback{gocql.RoundRobinHostPolicy()})
			tap.Init(s)
			for _, h := range p.r.Hosts() {
				tap.AddHost(h)
			}
			tap.SetPartitioner("org.apache.cassandra.dht.Murmur3Partitioner")
			last := ""
			return func(ks string, key []byte) []string {
				if ks != last {
					tap.KeyspaceChanged(gocql.KeyspaceUpdateEvent{Keyspace: ks})
					last = ks
				}
				next := tap.Pick(&fakeQuery{key: key, ks: ks})
				var ips []string
				for h := next(); h != nil; h = next() {
					ips = append(ips, h.Info().ConnectAddress().String())
				}
				return ips
			}
		},
		ExecSpeculative: func(stmt string, delay time.Duration, args ...any) error {
			sp := &gocql.SimpleSpeculativeExecution{NumAttempts: 1, TimeoutDelay: delay}
			return s.Query(stmt, args...).Idempotent(true).SetSpeculativeExecutionPolicy(sp).Exec()
		},
		Close: s.Close,
	}
}

// simConfig is a cluster config for c wired to p, logging to log.
func simConfig(t testing.TB, c *sim.Cluster, p *Policy, log driverLogger) *gocql.ClusterConfig {
	t.Helper()
	cl := gocql.NewCluster(c.Hosts()...)
	cl.Port = c.Port()
	cl.Timeout = 5 * time.Second
	cl.ConnectTimeout = 10 * time.Second // a loaded -race run once saw no answer to the startup within 5s
	cl.ReconnectInterval = 200 * time.Millisecond
	cl.Logger = log
	require.NoError(t, Wire(cl, p))
	return cl
}

// simSession connects the driver to c through policy p (wired).
func simSession(t testing.TB, c *sim.Cluster, p *Policy) *gocql.Session {
	t.Helper()
	s, err := simConfig(t, c, p, quietLogger{}).CreateSession()
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

// createKeyspace creates ks and its usertable and waits until p routes by
// its tokens (the v2 driver tells the policy after its debounced schema
// refresh).
func createKeyspace(t testing.TB, s *gocql.Session, p *Policy, ks, replication string) {
	t.Helper()
	require.NoError(t, s.Query("CREATE KEYSPACE IF NOT EXISTS "+ks+" WITH replication = "+replication).Exec())
	require.NoError(t, s.Query("CREATE TABLE IF NOT EXISTS "+ks+".usertable (y_id text PRIMARY KEY, field0 text)").Exec())
	require.Eventually(t, func() bool { return len(p.replicaIPs(ks, []byte("k"))) > 0 },
		10*time.Second, 50*time.Millisecond, "keyspace %s routed by token", ks)
}

// markerFallback ends the driver's token-aware plan where the replicas end:
// its Pick is only reached after the replicas.
type markerFallback struct{ gocql.HostSelectionPolicy }

func (markerFallback) Pick(statement) gocql.NextHost {
	return func() gocql.SelectedHost { return nil }
}

func (p *Policy) replicaIPs(ks string, key []byte) []string {
	reps, ok := p.r.Replicas(p.query(&fakeQuery{key: key, ks: ks}))
	if !ok {
		return nil
	}
	var out []string
	for _, h := range reps {
		out = append(out, h.ConnectAddress().String())
	}
	return out
}
