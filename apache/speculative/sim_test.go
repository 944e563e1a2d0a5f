package speculative

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/simtest"
	"github.com/tailroute/tailroute/sim"
)

// End-to-end tests against the simulated cluster: the real v2 driver over
// loopback. Assertions count requests, with generous margins.

const simKS = "hedge2"

func startSim(t *testing.T, nodes int, firstIP string) *sim.Cluster {
	return simtest.Start(t, sim.Config{Nodes: nodes, FirstIP: firstIP, Seed: 7})
}

type quietLogger struct{}

func (quietLogger) Error(string, ...gocql.LogField)   {}
func (quietLogger) Warning(string, ...gocql.LogField) {}
func (quietLogger) Info(string, ...gocql.LogField)    {}
func (quietLogger) Debug(string, ...gocql.LogField)   {}

// attemptCounter counts attempts the driver sent (one observation per
// attempt, losers included).
type attemptCounter struct{ n atomic.Int64 }

func (a *attemptCounter) ObserveQuery(context.Context, gocql.ObservedQuery) { a.n.Add(1) }

func newSimSession(t *testing.T, c *sim.Cluster, ks string, h *Hedger) (*gocql.Session, *attemptCounter) {
	t.Helper()
	cl := gocql.NewCluster(c.Hosts()...)
	cl.Port = c.Port()
	cl.Keyspace = ks
	cl.Consistency = gocql.One
	cl.Timeout = 5 * time.Second
	cl.ConnectTimeout = 10 * time.Second
	cl.Logger = quietLogger{}
	cl.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
	ac := &attemptCounter{}
	cl.QueryObserver = ac
	if h != nil {
		require.NoError(t, Wire(cl, h))
	}
	s, err := cl.CreateSession()
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s, ac
}

func setupData(t *testing.T, c *sim.Cluster, rf, n int) []string {
	t.Helper()
	s, _ := newSimSession(t, c, "", nil)
	require.NoError(t, s.Query(fmt.Sprintf("CREATE KEYSPACE IF NOT EXISTS %s WITH replication = {'class':'SimpleStrategy','replication_factor':%d}", simKS, rf)).Exec())
	require.NoError(t, s.Query("CREATE TABLE IF NOT EXISTS "+simKS+".usertable (y_id text PRIMARY KEY, field0 text)").Exec())
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("user%d", i)
		require.NoError(t, s.Query("INSERT INTO "+simKS+".usertable (y_id, field0) VALUES (?, ?)", keys[i], "v").Exec())
	}
	s.Close()
	return keys
}

// openLoop issues idempotent reads at a fixed rate for dur
// (simtest.OpenLoop); with h each execution is armed.
func openLoop(s *gocql.Session, h *Hedger, keys []string, rate int, dur time.Duration) simtest.LoadResult {
	return simtest.OpenLoop(rate, dur, func(i int) error {
		q := s.Query("SELECT field0 FROM usertable WHERE y_id = ?", keys[i%len(keys)]).Idempotent(true)
		ctx := context.Background()
		if h != nil {
			ctx = h.Arm(ctx, q)
		}
		var f string
		return q.ScanContext(ctx, &f)
	})
}

// TestSimHedgingRescuesPausedReplica: one node of three pauses 500ms every
// 5s. Two sessions of the v2 driver run the same open loop at the same
// time against the same pauses, one without hedging, one with the default
// Hedger. The Hedger must fire, win, stay within its budget and take its
// delay from its Recorder (as speculative's TestSimHedgingCutsStallTail,
// which says why the share of pause victims rescued is a logged figure and
// not a verdict).
func TestSimHedgingRescuesPausedReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end timing test; skipped with -short")
	}
	c := startSim(t, 3, "127.0.0.41")
	keys := setupData(t, c, 3, 300)
	h, err := New()
	require.NoError(t, err)
	base, _ := newSimSession(t, c, simKS, nil)
	hedged, attempts := newSimSession(t, c, simKS, h)

	const rate = 150 // half the CPU of 300/s: both sessions and the simulator share a loaded machine
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); openLoop(base, nil, keys, rate, 2*time.Second) }()
	go func() { defer wg.Done(); openLoop(hedged, h, keys, rate, 2*time.Second) }()
	wg.Wait()

	m := sim.DefaultModel()
	m.PauseEvery, m.PauseFor = 5*time.Second, 500*time.Millisecond
	phase := time.Now() // the stalls' phase starts at SetModel
	require.NoError(t, c.Nodes()[0].SetModel(m))

	st0, att0 := h.Stats(), attempts.n.Load()
	var rb, rh simtest.LoadResult
	wg.Add(2)
	go func() { defer wg.Done(); rb = openLoop(base, nil, keys, rate, 15*time.Second) }()
	go func() { defer wg.Done(); rh = openLoop(hedged, h, keys, rate, 15*time.Second) }()
	wg.Wait()
	time.Sleep(50 * time.Millisecond) // let cancelled losers report
	st1, att1 := h.Stats(), attempts.n.Load()

	execs := st1.Executions - st0.Executions
	extra := float64(att1-att0)/float64(execs) - 1
	hedges := st1.Hedges - st0.Hedges
	// Requests caught by a pause: slower than stallSlow and sent when a
	// pause could delay them that long, less the share of such slow
	// requests sent at other times (machine noise, alike in both sessions).
	const stallSlow, margin = 300 * time.Millisecond, 100 * time.Millisecond
	sb := rb.StallCaught(phase, m.PauseEvery, m.PauseFor, stallSlow, margin)
	sh := rh.StallCaught(phase, m.PauseEvery, m.PauseFor, stallSlow, margin)
	t.Logf("executions=%d attempts=%d extra=%.2f%% hedges=%d won=%d armed=%d delay=%v; caught by a pause (slower than %v, noise subtracted): unhedged %.1f %+v, hedged %.1f %+v",
		execs, att1-att0, 100*extra, hedges, st1.Won-st0.Won, st1.Armed-st0.Armed, st1.Delay, stallSlow, sb.Caught, sb, sh.Caught, sh)

	require.Zero(t, rb.Errs)
	require.Zero(t, rh.Errs)
	require.Greater(t, len(rb.Lat), 2000) // 2250 sent
	assert.LessOrEqual(t, extra, 0.05+0.01, "extra attempts within the 5% budget (+1% tolerance)")
	assert.Greater(t, hedges, uint64(0))
	assert.Greater(t, st1.Won-st0.Won, uint64(0), "hedges rescue requests: some answer before their primary")
	// The delay is the Recorder's latency at the effective quantile,
	// clamped (how many pause victims that rescues depends on the
	// machine's own noise: see speculative's TestSimHedgingCutsStallTail).
	simtest.DelayFollows(t, h, h.Recorder().LatencyQuantile, tailroute.DefaultMinDelay, tailroute.DefaultMaxDelay)
}
