// Policy scenarios under load with a slow, paused or stopped node, and the
// driver's own speculative execution past a paused replica.

package contract

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/simtest"
	"github.com/tailroute/tailroute/sim"
)

// load reads random keys of ks.usertable with workers goroutines until n
// requests are done (with feedback, each response's payload feedback goes
// to the policy) and returns the requests served per node IP.
func load(t *testing.T, c *sim.Cluster, s Session, ks string, n, workers int, feedback bool) map[string]uint64 {
	t.Helper()
	stmt := "SELECT field0 FROM " + ks + ".usertable WHERE y_id = ?"
	served, errs := simtest.ClosedLoop(c, n, workers, func(rng *rand.Rand) error {
		key := fmt.Sprintf("user%d", rng.IntN(100000))
		if feedback {
			return s.ReadFeedback(stmt, key)
		}
		return s.Exec(stmt, nil, key)
	})
	require.Empty(t, errs)
	return served
}

// SlowNode: 5 simulated nodes, RF 3, one node serving 5x slower. Round
// robin over the replicas sends it about 1/5 of the requests; C3 (with and
// without the simulator's payload feedback) sends it clearly less, P2C
// less. Every read is token-aware and every in-flight count returns to 0.
func SlowNode(t *testing.T, d Driver) {
	c := simtest.Start(t, sim.Config{Nodes: 5, Seed: 11, Feedback: true, Model: sim.ServiceModel{Workers: 4, MeanService: 2 * time.Millisecond}})
	slow := c.Hosts()[2]
	m := c.Node(slow).Model()
	m.Slowdown = 5
	require.NoError(t, c.Node(slow).SetModel(m))

	shares := map[string]float64{}
	for _, run := range []struct {
		name     string
		strategy tailroute.Strategy
		feedback bool
	}{{"roundrobin", tailroute.RoundRobin, false}, {"c3", tailroute.C3, false}, {"c3+feedback", tailroute.C3, true}, {"p2c", tailroute.P2C, false}} {
		p := d.policy(t, tailroute.WithStrategy(run.strategy))
		s := d.session(t, c, p, Config{})
		d.createKeyspace(t, s, p, "e2e", "{'class':'SimpleStrategy','replication_factor':3}")
		load(t, c, s, "e2e", 200, 8, run.feedback) // warm up
		unrouted := p.Counters().Unrouted          // DDL has no routing key
		served := load(t, c, s, "e2e", 1600, 8, run.feedback)
		shares[run.name] = simtest.Share(served, slow)
		t.Logf("%-12s slow node share %.3f served %v counters %+v", run.name, shares[run.name], served, p.Counters())
		for _, st := range p.Stats() {
			assert.EqualValues(t, 0, st.InFlight, st.Address)
			if run.feedback {
				assert.True(t, st.HasFeedback, st.Address)
			}
		}
		_, ok := p.LatencyQuantile(0.99)
		assert.True(t, ok)
		assert.Equal(t, unrouted, p.Counters().Unrouted, "every read was token-aware")
		s.Close()
	}
	assert.InDelta(t, 0.2, shares["roundrobin"], 0.06, "round robin: each node is 1 of 3 replicas for 3/5 of the keys")
	assert.Less(t, shares["c3"], 0.6*shares["roundrobin"])
	assert.Less(t, shares["c3+feedback"], 0.6*shares["roundrobin"])
	assert.Less(t, shares["p2c"], shares["roundrobin"])
}

// PausedNode: a node frozen for a while (stop-the-world pause) is avoided
// while it stalls: of the requests sent while it is paused, C3 sends it far
// less than its replica share, and no request fails. The load stops before
// the pause ends, so what is counted does not depend on how many requests
// the machine manages in that time: a request sent to the paused node is
// answered (and counted) when the pause ends.
func PausedNode(t *testing.T, d Driver) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 7, Model: sim.ServiceModel{Workers: 4, MeanService: time.Millisecond}})
	p := d.policy(t)
	s := d.session(t, c, p, Config{})
	d.createKeyspace(t, s, p, "pause", "{'class':'SimpleStrategy','replication_factor':3}")
	load(t, c, s, "pause", 300, 6, false)
	victim := c.Node(c.Hosts()[0])
	const pause = 1500 * time.Millisecond
	start := time.Now()
	victim.Pause(pause)
	served, errs := simtest.ClosedLoopUntil(c, start.Add(pause*2/3), 6, func(rng *rand.Rand) error {
		return s.Exec("SELECT field0 FROM pause.usertable WHERE y_id = ?", nil, fmt.Sprintf("user%d", rng.IntN(100000)))
	})
	require.Empty(t, errs)
	during := served[victim.IP()]
	var tot uint64
	for _, v := range served {
		tot += v
	}
	t.Logf("paused node got %d of the %d requests sent during its pause (its replica share would be 1/3)", during, tot)
	require.Greater(t, tot, uint64(6), "more requests than workers were sent during the pause (test premise)")
	assert.Less(t, float64(during), 0.15*float64(tot), "the paused node is avoided")
}

// NodeDownAndBack: a stopped node is skipped without errors and gets
// traffic again after it restarts.
func NodeDownAndBack(t *testing.T, d Driver) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 5, Model: sim.ServiceModel{ZeroService: true}})
	p := d.policy(t)
	s := d.session(t, c, p, Config{})
	d.createKeyspace(t, s, p, "updown", "{'class':'SimpleStrategy','replication_factor':3}")
	victim := c.Node(c.Hosts()[1])
	require.NoError(t, victim.Stop())
	require.Eventually(t, func() bool {
		for _, st := range p.Stats() {
			if strings.HasPrefix(st.Address, victim.IP()+":") {
				return !st.Up
			}
		}
		return false
	}, 10*time.Second, 20*time.Millisecond, "the driver reports the node down")
	served := load(t, c, s, "updown", 200, 4, false)
	assert.Zero(t, served[victim.IP()])
	require.NoError(t, victim.Restart())
	require.Eventually(t, func() bool {
		return load(t, c, s, "updown", 60, 2, false)[victim.IP()] > 5
	}, 15*time.Second, 100*time.Millisecond, "restarted node gets traffic again")
}

// DriverSpeculation: the driver's own speculative execution over this
// policy's pooled plans. With RoundRobin ranking a paused replica is first
// for about a third of the reads; a speculative attempt after 20ms on the
// next replica answers them, so no read waits for the pause, none fails,
// and every host's in-flight count returns to zero (race-free under -race,
// late calls included).
func DriverSpeculation(t *testing.T, d Driver) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 8, Model: sim.ServiceModel{ZeroService: true}})
	p := d.policy(t, tailroute.WithStrategy(tailroute.RoundRobin))
	s := d.session(t, c, p, Config{})
	d.createKeyspace(t, s, p, "spec", "{'class':'SimpleStrategy','replication_factor':3}")
	read := func(i int) (time.Duration, error) {
		start := time.Now()
		err := s.ExecSpeculative("SELECT field0 FROM spec.usertable WHERE y_id = ?", 20*time.Millisecond, fmt.Sprintf("user%d", i))
		return time.Since(start), err
	}
	for i := 0; i < 30; i++ { // warm-up
		_, err := read(i)
		require.NoError(t, err)
	}
	// Long enough that the 60 reads end before it does on a loaded
	// machine: a read that waited for the paused replica would be served
	// by it, so the replica's count, unchanged after the reads, says none
	// did (an order of events, not a latency bound).
	const pause = 4 * time.Second
	victim := c.Node(c.Hosts()[0])
	before := victim.Stats().Served
	victim.Pause(pause)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		worst time.Duration
		errs  []error
	)
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				d, err := read(w*100 + i)
				mu.Lock()
				worst = max(worst, d)
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	held := victim.Stats().InFlight
	require.Empty(t, errs)
	t.Logf("slowest of 60 reads during a %v pause: %v; the paused replica holds %d", pause, worst, held)
	assert.Equal(t, before, victim.Stats().Served, "speculative attempts answered the reads the paused replica held: it served none of them")
	assert.Positive(t, held, "the paused replica was first for some reads (test premise)")
	require.Eventually(t, func() bool {
		for _, st := range p.Stats() {
			if st.InFlight != 0 {
				return false
			}
		}
		return victim.Stats().Served > before
	}, pause+10*time.Second, 20*time.Millisecond, "in-flight counts return to zero once the pause ends")
}
