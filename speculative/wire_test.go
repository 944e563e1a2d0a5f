package speculative

import (
	"testing"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/track"
	"github.com/tailroute/tailroute/policy"
)

// The policy reports silence, so WithSource(p) keeps the burst cap
// (WithBurstCap) on.
var _ tailroute.SilenceSource = (*policy.Policy)(nil)

// TestWireWithPolicyWire: policy.Wire then Wire hedges over our policy;
// the other order is an error from policy.Wire that keeps the hedging
// wrapper in place, never a silent drop.
func TestWireWithPolicyWire(t *testing.T) {
	p, err := policy.New()
	require.NoError(t, err)
	h, err := New(tailroute.WithSource(p))
	require.NoError(t, err)
	cfg := gocql.NewCluster("127.0.0.1")
	require.NoError(t, policy.Wire(cfg, p))
	require.NoError(t, Wire(cfg, h))
	w, ok := cfg.PoolConfig.HostSelectionPolicy.(interface{ Hedger() *Hedger })
	require.True(t, ok, "hedging wrapper installed")
	assert.Same(t, h, w.Hedger())
	assert.Same(t, p, cfg.PoolConfig.HostSelectionPolicy.(interface {
		Inner() gocql.HostSelectionPolicy
	}).Inner())

	p2, err := policy.New()
	require.NoError(t, err)
	h2, err := New()
	require.NoError(t, err)
	cfg2 := gocql.NewCluster("127.0.0.1")
	require.NoError(t, Wire(cfg2, h2))
	wrapped := cfg2.PoolConfig.HostSelectionPolicy
	err = policy.Wire(cfg2, p2)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "call policy.Wire first")
	assert.Equal(t, wrapped, cfg2.PoolConfig.HostSelectionPolicy, "hedging wrapper kept")
}

// TestWithSourceTypedNil: a typed nil source is an error from New, not a
// panic at the first delay refresh.
func TestWithSourceTypedNil(t *testing.T) {
	var tr *track.Tracker
	_, err := New(tailroute.WithSource(tr))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "*track.Tracker(nil)")
	var p *policy.Policy
	_, err = New(tailroute.WithSource(p))
	require.Error(t, err)
	_, err = New(tailroute.WithSource(nil))
	require.Error(t, err)
}
