package policy

import (
	"context"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wrappingPolicy stands for a wrapper such as speculative's hedging policy.
type wrappingPolicy struct{ gocql.HostSelectionPolicy }

func (w wrappingPolicy) Inner() gocql.HostSelectionPolicy { return w.HostSelectionPolicy }

// TestWireMisuse: nil arguments, a second Wire and a wrapper already set
// are errors that leave the config unchanged, never a panic, a
// self-chained observer or a dropped wrapper.
func TestWireMisuse(t *testing.T) {
	p, hosts, _ := testPolicy(t, 1)
	err := Wire(nil, p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cfg = nil")
	cfg := gocql.NewCluster("127.0.0.1")
	err = Wire(cfg, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "p = nil")
	assert.Nil(t, cfg.PoolConfig.HostSelectionPolicy)

	require.NoError(t, Wire(cfg, p))
	obs := cfg.QueryObserver
	err = Wire(cfg, p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "already wired to this cfg")
	assert.Same(t, obs, cfg.QueryObserver, "observer not chained to itself")
	base := time.Now()
	cfg.QueryObserver.ObserveQuery(context.Background(), gocql.ObservedQuery{Host: hosts[0], Start: base, End: base.Add(time.Millisecond)})
	assert.EqualValues(t, 1, p.r.Tracker().Host("h0").Snapshot().Samples, "one attempt measured once")

	cfg2 := gocql.NewCluster("127.0.0.1")
	err = Wire(cfg2, p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "another gocql.ClusterConfig")
	assert.Nil(t, cfg2.PoolConfig.HostSelectionPolicy)
	assert.Nil(t, cfg2.QueryObserver)

	p2, err := New()
	require.NoError(t, err)
	rr := gocql.RoundRobinHostPolicy()
	cfg3 := gocql.NewCluster("127.0.0.1")
	w := wrappingPolicy{rr}
	cfg3.PoolConfig.HostSelectionPolicy = w
	err = Wire(cfg3, p2)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "call policy.Wire first")
	assert.Equal(t, w, cfg3.PoolConfig.HostSelectionPolicy, "the wrapper is not dropped")
	assert.Nil(t, cfg3.QueryObserver)

	// a plain policy set before is replaced
	cfg3.PoolConfig.HostSelectionPolicy = rr
	require.NoError(t, Wire(cfg3, p2))
	assert.Same(t, p2, cfg3.PoolConfig.HostSelectionPolicy)

}
