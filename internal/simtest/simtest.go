// Package simtest holds the driver-free helpers that the adapters'
// end-to-end tests (policy, apache/policy, speculative, apache/speculative)
// share: a simulated cluster per test, closed- and open-loop load with the
// driver's query passed in as a function, and the ratios the tests assert
// on. Only tests import it.
package simtest

import (
	"context"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/tailroute/tailroute/sim"
)

// Start starts a simulated cluster of cfg and closes it when the test ends.
func Start(t testing.TB, cfg sim.Config) *sim.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c, err := sim.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("sim.Start: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("sim.Cluster.Close: %v", err)
		}
	})
	return c
}

// Served returns the requests each node has served, by node IP.
func Served(c *sim.Cluster) map[string]uint64 {
	out := map[string]uint64{}
	for _, nd := range c.Nodes() {
		out[nd.IP()] = nd.Stats().Served
	}
	return out
}

// ClosedLoop runs n requests (rounded down to a multiple of workers) on
// workers goroutines; worker w calls do with its own generator, seeded
// (w, 9). It returns the requests each node served meanwhile, by node IP,
// and the errors do returned.
func ClosedLoop(c *sim.Cluster, n, workers int, do func(rng *rand.Rand) error) (map[string]uint64, []error) {
	per := n / workers
	return closedLoop(c, workers, func(i int) bool { return i < per }, do)
}

// ClosedLoopUntil is ClosedLoop with workers that start no request at or
// after until; it returns once every request started has been answered, so
// what it counts is exactly the requests sent before until.
func ClosedLoopUntil(c *sim.Cluster, until time.Time, workers int, do func(rng *rand.Rand) error) (map[string]uint64, []error) {
	return closedLoop(c, workers, func(int) bool { return time.Now().Before(until) }, do)
}

// closedLoop runs workers goroutines that each call do while more(i) holds
// for their i-th request.
func closedLoop(c *sim.Cluster, workers int, more func(i int) bool, do func(rng *rand.Rand) error) (map[string]uint64, []error) {
	before := Served(c)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			for i := 0; more(i); i++ {
				if err := do(rng); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}(w)
	}
	wg.Wait()
	out := Served(c)
	for ip, v := range out {
		out[ip] = v - before[ip]
	}
	return out, errs
}

// Share returns ip's share of the requests in served.
func Share(served map[string]uint64, ip string) float64 {
	var tot uint64
	for _, v := range served {
		tot += v
	}
	return float64(served[ip]) / float64(tot)
}

// Set returns the distinct strings of xs, sorted.
func Set(xs []string) []string {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	out := make([]string, 0, len(m))
	for x := range m {
		out = append(out, x)
	}
	sort.Strings(out)
	return out
}

// LoadResult is what an open loop measured.
type LoadResult struct {
	Lat  []time.Duration // successful requests, sorted, from the intended start
	Errs int
	OK   []Timed // successful requests in the order of their intended start
}

// Timed is one request's intended start and latency.
type Timed struct {
	At  time.Time
	Lat time.Duration
}

// Stalled is StallCaught's estimate and the counts it comes from.
type Stalled struct {
	Caught          float64 // SlowIn minus the slow requests noise explains there
	SlowIn, In      int     // requests that could have waited for a stall: slow, all
	SlowOut, Out    int     // the others: slow (noise), all
	NoiseShareOfOut float64 // SlowOut/Out
}

// StallCaught estimates how many requests periodic stalls (sim
// ServiceModel PauseEvery/PauseFor, phase starting at base) made slower
// than over. Only a request whose intended start lies within margin of
// [stall start, stall end - over] can have waited that long for a stall;
// slow requests elsewhere are machine noise (scheduling, GC, a loaded
// host), which hits every request alike, so their share outside the
// windows estimates the noise inside and is subtracted. It needs
// pause+margin < every and over > margin.
func (r LoadResult) StallCaught(base time.Time, every, pause, over, margin time.Duration) Stalled {
	var s Stalled
	for _, q := range r.OK {
		el := q.At.Sub(base)
		in := false
		if el >= 0 {
			end := (el/every + 1) * every // the end of the stall closing this period
			in = el >= end-pause-margin && el <= end-over+margin
		}
		slow := q.Lat > over
		switch {
		case in:
			s.In++
			if slow {
				s.SlowIn++
			}
		default:
			s.Out++
			if slow {
				s.SlowOut++
			}
		}
	}
	if s.Out > 0 {
		s.NoiseShareOfOut = float64(s.SlowOut) / float64(s.Out)
	}
	s.Caught = float64(s.SlowIn) - s.NoiseShareOfOut*float64(s.In)
	return s
}

// Over counts the requests slower than d.
func (r LoadResult) Over(d time.Duration) int {
	return len(r.Lat) - sort.Search(len(r.Lat), func(i int) bool { return r.Lat[i] > d })
}

// Q returns the p-quantile of the latencies (nearest rank); 0 without any.
func (r LoadResult) Q(p float64) time.Duration {
	if len(r.Lat) == 0 {
		return 0
	}
	i := int(float64(len(r.Lat))*p+0.999999) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(r.Lat) {
		i = len(r.Lat) - 1
	}
	return r.Lat[i]
}

// OpenLoop calls do(i) for i = 0, 1, ... at a fixed rate for dur, each in
// its own goroutine, so a stalled request does not hold back the ones
// after it; a latency counts from the request's intended start.
func OpenLoop(rate int, dur time.Duration, do func(i int) error) LoadResult {
	interval := time.Second / time.Duration(rate)
	var (
		mu  sync.Mutex
		res LoadResult
		wg  sync.WaitGroup
	)
	start := time.Now()
	for i := 0; ; i++ {
		intended := start.Add(time.Duration(i) * interval)
		if intended.Sub(start) >= dur {
			break
		}
		time.Sleep(time.Until(intended))
		wg.Add(1)
		go func(i int, intended time.Time) {
			defer wg.Done()
			err := do(i)
			d := time.Since(intended)
			mu.Lock()
			if err != nil {
				res.Errs++
			} else {
				res.Lat = append(res.Lat, d)
				res.OK = append(res.OK, Timed{At: intended, Lat: d})
			}
			mu.Unlock()
		}(i, intended)
	}
	wg.Wait()
	sort.Slice(res.Lat, func(i, j int) bool { return res.Lat[i] < res.Lat[j] })
	sort.Slice(res.OK, func(i, j int) bool { return res.OK[i].At.Before(res.OK[j].At) })
	return res
}

// Hedger is what DelayFollows needs of either driver's Hedger.
type Hedger interface {
	Refresh()
	Quantile() float64
	Delay() time.Duration
}

// DelayFollows checks that h's delay, recomputed now, is the source's
// latency at h's effective quantile (quantile is the source's
// LatencyQuantile) clamped to [lo, hi].
func DelayFollows(t testing.TB, h Hedger, quantile func(float64) (time.Duration, bool), lo, hi time.Duration) {
	t.Helper()
	h.Refresh()
	q := h.Quantile()
	want, ok := quantile(q)
	if !ok {
		t.Errorf("the hedge delay's source has no estimate")
		return
	}
	want = min(max(want, lo), hi)
	if got := h.Delay(); got != want {
		t.Errorf("hedge delay %v, want %v: the source's latency at quantile %.4f clamped to [%v, %v]", got, want, q, lo, hi)
	}
}
