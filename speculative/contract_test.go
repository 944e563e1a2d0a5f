package speculative

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/require"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/contract"
	"github.com/tailroute/tailroute/internal/track"
	"github.com/tailroute/tailroute/policy"
	"github.com/tailroute/tailroute/sim"
)

// the tracker is a LatencySource
var _ tailroute.LatencySource = (*track.Tracker)(nil)

// TestContract runs the hedging scenarios of the adapter contract suite
// (internal/contract) on this adapter's driver. What differs between the
// drivers is in driver_test.go.
func TestContract(t *testing.T) { contract.Hedging(t, binding()) }

// binding binds this adapter and its driver for the contract suite.
func binding() contract.HedgeDriver {
	return contract.HedgeDriver{
		New:       func(opts ...tailroute.Option) (contract.Hedger, error) { return New(opts...) },
		Recorder:  func(h contract.Hedger) tailroute.LatencySource { return h.(*Hedger).Recorder() },
		NewPolicy: func(opts ...tailroute.Option) (tailroute.LatencySource, error) { return policy.New(opts...) },
		Open: func(t *testing.T, c *sim.Cluster, cfg contract.HedgeConfig) contract.HedgeSession {
			var h *Hedger
			if cfg.Hedger != nil {
				h = cfg.Hedger.(*Hedger)
			}
			s, attempts := newSimSession(t, c, cfg.Keyspace, h, func(cl *gocql.ClusterConfig) {
				if cfg.Policy != nil {
					require.NoError(t, policy.Wire(cl, cfg.Policy.(*policy.Policy)))
				}
				if cfg.RetryNextHost {
					cl.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: 2}
				}
			})
			return contract.HedgeSession{
				Exec: func(stmt string, args ...any) error { return s.Query(stmt, args...).Exec() },
				Read: func(key string, idempotent bool) (string, error) {
					return scan(s.Query(readStmt, key).Idempotent(idempotent), h)
				},
				ReadSpeculative: func(key string, delay time.Duration) (f string, err error) {
					sp := &gocql.SimpleSpeculativeExecution{NumAttempts: 1, TimeoutDelay: delay}
					err = s.Query(readStmt, key).Idempotent(true).SetSpeculativeExecutionPolicy(sp).Scan(&f)
					return f, err
				},
				Attempts: attempts.Load,
				Close:    s.Close,
			}
		},
		Code: func(err error) (int, bool) {
			var re gocql.RequestError
			if errors.As(err, &re) {
				return re.Code(), true
			}
			return 0, false
		},
		NoConnections: gocql.ErrNoConnections,
	}
}

// attemptCounter counts attempts the driver sent (one observation per
// attempt, losers included).
type attemptCounter struct{ contract.Counter }

func (a *attemptCounter) ObserveQuery(context.Context, gocql.ObservedQuery) { a.Add() }

const readStmt = "SELECT field0 FROM usertable WHERE y_id = ?"

// newSimSession connects to c with keyspace ks at consistency ONE through
// the driver's TokenAwareHostPolicy(RoundRobinHostPolicy()) and h (wired)
// if set, after tweak.
func newSimSession(t *testing.T, c *sim.Cluster, ks string, h *Hedger, tweak func(*gocql.ClusterConfig)) (*gocql.Session, *attemptCounter) {
	t.Helper()
	cl := gocql.NewCluster(c.Hosts()...)
	cl.Port = c.Port()
	cl.Keyspace = ks
	cl.Consistency = gocql.One
	cl.Timeout = 5 * time.Second
	cl.ConnectTimeout = 10 * time.Second // a loaded -race run once saw no answer to the startup within 5s
	cl.Logger = quietLogger{}
	cl.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
	ac := &attemptCounter{}
	cl.QueryObserver = ac
	if tweak != nil {
		tweak(cl)
	}
	if h != nil {
		require.NoError(t, Wire(cl, h))
	}
	s, err := cl.CreateSession()
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s, ac
}
