package vsim

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute/internal/core"
)

// small is a cell that runs in well under a second: 10 servers, one 5x
// slow, 20 clients.
func small(strategy string) Config {
	return Config{Servers: 10, Clients: 20, Requests: 20000, Strategy: strategy, Seed: 1,
		Slow: []Slow{{Server: 0, Factor: 5}}}
}

// fingerprint is everything a run measured, as text.
func fingerprint(r *Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %d %v %d %d\n", r.Requests, r.Errors, r.Duration, r.Polls, r.Retries)
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999, 1} {
		fmt.Fprintf(&b, "%v ", r.Quantile(q))
	}
	fmt.Fprintln(&b, r.Served)
	for _, w := range r.Windows {
		fmt.Fprintln(&b, w)
	}
	return b.String()
}

// A run is a pure function of its Config: the engine's strategies (whose
// poller runs as processes of the scheduler, and whose backpressure
// sleeps) and the Selectors give the same measurements twice.
func TestRunIsDeterministic(t *testing.T) {
	for _, st := range []string{"tailroute", "tailroute+hedge", "c3", "rr"} {
		cfg := small(st)
		cfg.FluctuationT = 50 * time.Millisecond
		cfg.ReadRepair = 0.1
		a, err := Run(cfg)
		require.NoError(t, err)
		b, err := Run(cfg)
		require.NoError(t, err)
		require.Equal(t, fingerprint(a), fingerprint(b), st)
		cfg.Seed = 2
		c, err := Run(cfg)
		require.NoError(t, err)
		require.NotEqual(t, fingerprint(a), fingerprint(c), "%s: another seed, another run", st)
	}
}

// Every strategy answers every request, and the ones that measure the
// servers send the 5x slow server less than round robin does.
func TestEveryStrategyRuns(t *testing.T) {
	share := map[string]float64{}
	for _, st := range strings.Split(StrategyNames(), ", ") {
		res, err := Run(small(st))
		require.NoError(t, err, st)
		assert.Equal(t, 20000, res.Requests, st)
		assert.Zero(t, res.Errors, st)
		assert.NotEmpty(t, StrategyDoc(st), st)
		share[st] = res.Share()[0]
	}
	for _, st := range []string{"tailroute", "tailroute-nopoll", "c3", "oracle", "peakewma"} {
		assert.Less(t, share[st], share["rr"]/2, st)
	}
}

// The engine's server-load poller runs in virtual time: polls stay
// within the budget of tailroute.WithPollBudget (a tenth of the client's
// requests, after a warm-up of at most 8 polls per node and client), and
// tailroute-nopoll sends none.
func TestPollsWithinBudget(t *testing.T) {
	res, err := Run(small("tailroute"))
	require.NoError(t, err)
	assert.Greater(t, res.Polls, int64(0))
	assert.LessOrEqual(t, res.Polls, int64(20000/10+8*10*20))
	res, err = Run(small("tailroute-nopoll"))
	require.NoError(t, err)
	assert.Zero(t, res.Polls)
}

// Faults: a server down loses what it holds and gets nothing while down;
// a failing server's errors are counted; a pause delays the answers it
// holds by the pause.
func TestFaults(t *testing.T) {
	cfg := small("tailroute")
	cfg.Slow = nil
	cfg.Down = []Down{{Server: 3, At: 500 * time.Millisecond, Up: time.Second}}
	res, err := Run(cfg)
	require.NoError(t, err)
	w := res.Windows[3]
	for i := 6; i < 10; i++ { // 600-1000 ms: down (the first window after At may still get requests in flight)
		assert.Zero(t, w[i], "window %d", i)
	}
	assert.Greater(t, w[len(w)-2], uint32(0), "back after Up")

	cfg = small("lor")
	cfg.Slow = nil
	cfg.Failing = []Failing{{Server: 2, Rate: 1}}
	res, err = Run(cfg)
	require.NoError(t, err)
	assert.InDelta(t, res.Served[2], int64(res.Errors), 0)
	assert.Greater(t, res.Errors, 100)
	cfg.Failing[0].Until = res.Duration / 2 // fails the first half only
	half, err := Run(cfg)
	require.NoError(t, err)
	assert.InDelta(t, res.Errors/2, half.Errors, float64(res.Errors)/5)

	cfg = small("rr")
	cfg.Slow = nil
	cfg.Utilization = 0.2
	cfg.PauseEvery, cfg.PauseFor = time.Second, 150*time.Millisecond
	res, err = Run(cfg)
	require.NoError(t, err)
	assert.Greater(t, res.Quantile(1), 140*time.Millisecond)
	assert.Less(t, res.Quantile(0.5), 20*time.Millisecond)
}

// Hedging runs the product's hedger on the virtual clock: with two of ten
// servers paused 150 ms every second, hedges cut the tail the pauses make
// (round robin's p99, tailroute's p99.9: tailroute avoids most of the
// pauses by itself) within the hedger's 5 % budget, and every request is
// measured once (a losing attempt's answer is not a second measurement).
func TestHedging(t *testing.T) {
	pauses := func(st string) Config {
		cfg := small(st)
		cfg.Slow = nil
		cfg.Utilization = 0.3
		cfg.PauseEvery, cfg.PauseFor, cfg.PauseServers = time.Second, 150*time.Millisecond, []int{2, 7}
		return cfg
	}
	res := map[string]*Result{}
	for _, st := range []string{"token-aware", "token-aware+hedge", "tailroute", "tailroute+hedge"} {
		r, err := Run(pauses(st))
		require.NoError(t, err, st)
		assert.Equal(t, 20000, r.Requests, st)
		assert.Zero(t, r.Errors, st)
		assert.LessOrEqual(t, r.Hedges, int64(0.05*20000)+20, st)
		assert.Equal(t, int64(r.Requests)+r.Hedges, r.Sent, "%s: one attempt per request, and the hedges", st)
		res[st] = r
	}
	for st, q := range map[string]float64{"token-aware": 0.99, "tailroute": 0.999} {
		assert.Zero(t, res[st].Hedges, st)
		assert.Greater(t, res[st+"+hedge"].Hedges, int64(0), st)
		assert.Less(t, res[st+"+hedge"].Quantile(q), res[st].Quantile(q)/2, "%s: p%v", st, 100*q)
	}
}

// The paper's simulator's arrivals (Config.Generators): every request is
// made, each on a whole millisecond, at the rate of the utilization, and
// the run is a function of its Config as with the Poisson process.
func TestGenerators(t *testing.T) {
	cfg := small("c3")
	cfg.Generators = 7 // 20000 = 7 x 2857 + 1
	a, err := Run(cfg)
	require.NoError(t, err)
	assert.EqualValues(t, cfg.Requests, a.Requests)
	assert.Zero(t, a.Arrivals%time.Millisecond, "the last arrival, %v, is on a whole millisecond", a.Arrivals)
	want := time.Duration(float64(cfg.Requests) / cfg.ArrivalRate() * float64(time.Second))
	assert.InDelta(t, 1, float64(a.Arrivals)/float64(want), 0.03, "last arrival %v, at the utilization's rate %v", a.Arrivals, want)
	b, err := Run(cfg)
	require.NoError(t, err)
	require.Equal(t, fingerprint(a), fingerprint(b))
	cfg.Generators = 0
	c, err := Run(cfg)
	require.NoError(t, err)
	require.NotEqual(t, fingerprint(a), fingerprint(c), "another arrival process, another run")
}

// Bad input names the field and its range.
func TestValidate(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Servers: -1}, "Config.Servers = -1, allowed 1..10000"},
		{Config{Utilization: 2}, "Config.Utilization = 2, allowed (0, 1.5]"},
		{Config{Servers: 2, RF: 3}, "Config.RF = 3, allowed 1..min(Servers, 8) (Servers = 2)"},
		{Config{RF: 9}, "Config.RF = 9, allowed 1..min(Servers, 8)"},
		{Config{Strategy: "nope"}, `Config.Strategy = "nope", allowed one of`},
		{Config{Slow: []Slow{{Server: 99, Factor: 2}}}, "Config.Slow[0].Server = 99, allowed 0..49"},
		{Config{PauseEvery: time.Second, PauseFor: 2 * time.Second}, "Config.PauseFor = 2s"},
		{Config{Requests: 10, Generators: 11}, "Config.Generators = 11, allowed 0..Requests (10)"},
		{Config{Generators: -1}, "Config.Generators = -1, allowed 0..Requests"},
		{Config{Failing: []Failing{{Server: 1, Rate: 1, At: time.Second, Until: time.Second}}}, "Config.Failing[0].Until = 1s, allowed 0 (never) or after At (1s)"},
	} {
		_, err := Run(c.cfg)
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.want)
	}
}

func TestDispersion(t *testing.T) {
	assert.InDelta(t, 0, dispersion([]uint32{5, 5, 5}), 1e-12)
	assert.InDelta(t, 2.0/3/2, dispersion([]uint32{1, 3, 2}), 1e-12) // mean 2, variance 2/3
	assert.True(t, math.IsNaN(dispersion([]uint32{0, 0})))
}

// Round robin spreads Poisson arrivals: each server's requests per window
// have an index of dispersion near 1, also when a slow server's queue
// keeps the run going long after the last arrival (those windows are not
// the arrivals'), the yardstick herding is measured against.
func TestRoundRobinDispersionIsPoisson(t *testing.T) {
	cfg := small("token-aware")
	cfg.Requests = 40000
	res, err := Run(cfg)
	require.NoError(t, err)
	require.Greater(t, res.Duration, res.Arrivals+time.Second, "the slow server drains after the arrivals")
	d := res.Dispersion()
	sort.Float64s(d)
	assert.InDelta(t, 1, d[len(d)/2], 0.3)
}

// zoneCell is a small zone cell: 6 servers in 3 racks, 4 clients in rack1.
func zoneCell(strategy string) Config {
	return Config{Servers: 6, Clients: 4, Requests: 3000, Utilization: 1.0 / 6, Threads: 8, Racks: 3,
		Strategy: strategy, Seed: 1}
}

// Zones: NetworkTopologyStrategy puts one replica of every key in each
// rack; rack-aware never leaves the clients' rack, tailroute-rack leaves
// it less than tailroute; the runs repeat; a message's delay is its
// pair's, within the jitter.
func TestZones(t *testing.T) {
	m := &model{cfg: zoneCell("tailroute").withDefaults()}
	m.s = newSched(m.handle)
	require.NoError(t, m.build())
	for k := range uint64(200) {
		var key [8]byte
		binary.BigEndian.PutUint64(key[:], k*0x9e3779b97f4a7c15)
		racks := map[int32]bool{}
		for _, s := range m.rm.Lookup(core.Murmur3Token(key[:])) {
			racks[m.srvRack[s]] = true
		}
		require.Len(t, racks, 3, "key %d", k)
	}
	for range 1000 {
		in, out := m.delay(0, 0), m.delay(0, 1) // client 0 and server 0 in rack1, server 1 in rack2
		require.True(t, in >= 40*time.Microsecond && in <= 60*time.Microsecond, in)
		require.True(t, out >= 400*time.Microsecond && out <= 600*time.Microsecond, out)
	}

	share := map[string]float64{}
	for _, st := range []string{"tailroute-rack", "tailroute", "rack-aware", "oracle"} {
		a, err := Run(zoneCell(st))
		require.NoError(t, err, st)
		b, err := Run(zoneCell(st))
		require.NoError(t, err, st)
		require.Equal(t, fingerprint(a), fingerprint(b), st)
		require.Equal(t, a.OutOfZone, b.OutOfZone, st)
		assert.Equal(t, int64(3000), a.Sent, st)
		share[st] = a.OutOfZoneShare()
	}
	assert.Zero(t, share["rack-aware"])
	assert.Greater(t, share["tailroute"], 0.4)
	assert.Less(t, share["tailroute-rack"], share["tailroute"]/2)

	res, err := Run(small("tailroute"))
	require.NoError(t, err)
	assert.Zero(t, res.OutOfZone, "no zones: nothing counted")
}

func TestValidateZones(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Servers: 2, RF: 1, Racks: 3}, "Config.Racks = 3, allowed 0..min(Servers, 64)"},
		{Config{ClientRacks: []int{1}}, "Config.Racks = 0, allowed 1..64 with ClientRacks"},
		{Config{Racks: 3, ClientRacks: []int{1, 4}}, "Config.ClientRacks[1] = 4, allowed 1..Racks (3)"},
		{Config{Racks: 3, Jitter: 2}, "Config.Jitter = 2, allowed 0..1"},
		{Config{PauseServers: []int{50}}, "Config.PauseServers[0] = 50, allowed 0..49"},
	} {
		_, err := Run(c.cfg)
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.want)
	}
}
