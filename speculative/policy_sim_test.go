package speculative

import (
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/simtest"
	"github.com/tailroute/tailroute/internal/track"
	"github.com/tailroute/tailroute/policy"
	"github.com/tailroute/tailroute/sim"
)

// the tracker is a LatencySource
var _ tailroute.LatencySource = (*track.Tracker)(nil)

// TestSimWithOurPolicy: hedging on top of our C3 policy, the delay
// following its tracker. One node of three stalls 500ms every 2s
// with C3 in both sessions. C3 steers new requests away from the stalled
// node within milliseconds, so only the requests already queued there when
// it stalls wait for it; hedging must rescue some (hedges that answer
// before their primary), fire, stay within the budget, and take its delay
// from the policy's tracker.
func TestSimWithOurPolicy(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end timing test; skipped with -short")
	}
	c := startSim(t, 3, "127.0.0.16")
	keys := setupData(t, c, 3, 300)

	withC3 := func(t *testing.T) (func(*gocql.ClusterConfig), *policy.Policy) {
		p, err := policy.New()
		require.NoError(t, err)
		return func(cl *gocql.ClusterConfig) { require.NoError(t, policy.Wire(cl, p)) }, p
	}
	wireBase, _ := withC3(t)
	base, _ := newSimSession(t, c, simKS, nil, wireBase)

	wireHedged, p := withC3(t)
	h, err := New(tailroute.WithSource(p))
	require.NoError(t, err)
	hedged, attempts := newSimSession(t, c, simKS, h, wireHedged)

	const rate = 200 // a third less CPU than 300/s; nothing here counts requests per stall
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); openLoop(base, keys, rate, 2*time.Second, true) }()
	go func() { defer wg.Done(); openLoop(hedged, keys, rate, 2*time.Second, true) }()
	wg.Wait()
	_, ok := p.LatencyQuantile(0.95)
	require.True(t, ok, "the policy has a p95 after the warm-up")

	m := sim.DefaultModel()
	m.PauseEvery, m.PauseFor = 2*time.Second, 500*time.Millisecond
	phase := time.Now() // the stalls' phase starts at SetModel
	require.NoError(t, c.Nodes()[0].SetModel(m))

	st0, att0 := h.Stats(), attempts.n.Load()
	var rb, rh simtest.LoadResult
	wg.Add(2)
	go func() { defer wg.Done(); rb = openLoop(base, keys, rate, 10*time.Second, true) }()
	go func() { defer wg.Done(); rh = openLoop(hedged, keys, rate, 10*time.Second, true) }()
	wg.Wait()
	time.Sleep(50 * time.Millisecond)
	st1, att1 := h.Stats(), attempts.n.Load()

	execs := st1.Executions - st0.Executions
	extra := float64(att1-att0)/float64(execs) - 1
	hedges := st1.Hedges - st0.Hedges
	t.Logf("C3 unhedged: n=%d p50=%v p99=%v p99.9=%v max=%v errs=%d", len(rb.Lat), rb.Q(.5), rb.Q(.99), rb.Q(.999), rb.Q(1), rb.Errs)
	t.Logf("C3 hedged:   n=%d p50=%v p99=%v p99.9=%v max=%v errs=%d", len(rh.Lat), rh.Q(.5), rh.Q(.99), rh.Q(.999), rh.Q(1), rh.Errs)
	t.Logf("C3 hedged: executions=%d extra=%.2f%% hedges=%d denied=%d delay=%v quantile=%.4f",
		execs, 100*extra, hedges, st1.BudgetDenied-st0.BudgetDenied, st1.Delay, st1.Quantile)
	require.Zero(t, rb.Errs)
	require.Zero(t, rh.Errs)
	assert.Greater(t, hedges, uint64(0))
	assert.LessOrEqual(t, extra, 0.05+0.01)
	const stallSlow = 300 * time.Millisecond
	sb := rb.StallCaught(phase, m.PauseEvery, m.PauseFor, stallSlow, stallMargin)
	sh := rh.StallCaught(phase, m.PauseEvery, m.PauseFor, stallSlow, stallMargin)
	t.Logf("caught by a stall (slower than %v, noise subtracted): unhedged %.1f %+v, hedged %.1f %+v; hedges won %d",
		stallSlow, sb.Caught, sb, sh.Caught, sh, st1.Won-st0.Won)
	// A hedge that answers before its primary is a request rescued from a
	// slow replica. How many stall victims that saves depends on the
	// machine's own noise (it sets the tracker's quantile and spends the
	// budget); that figure is ycsb-lite's (-compare tailroute,tailroute+hedge
	// -scenario gc-pauses) and TestSimHedgingCutsStallTail's.
	assert.Greater(t, st1.Won-st0.Won, uint64(0), "hedges rescue requests: some answer before their primary")
	assertDelayFollows(t, h, p) // the delay is the policy tracker's quantile, clamped
}
