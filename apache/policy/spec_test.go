package policy

import (
	"fmt"
	"sync"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/simtest"
	"github.com/tailroute/tailroute/sim"
)

// TestDriverSpeculation: the v2 driver's own speculative execution over
// this policy's pooled plans. With RoundRobin ranking a paused replica is
// first for about a third of the reads; a speculative attempt after 20ms
// on the next replica answers them, so no read waits for the pause, none
// fails, and every host's in-flight count returns to zero (race-free under
// -race, late calls included).
func TestDriverSpeculation(t *testing.T) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 8, Model: sim.ServiceModel{ZeroService: true}})
	p, err := New(tailroute.WithStrategy(tailroute.RoundRobin))
	require.NoError(t, err)
	s := simSession(t, c, p)
	createKeyspace(t, s, p, "spec", "{'class':'SimpleStrategy','replication_factor':3}")
	sp := &gocql.SimpleSpeculativeExecution{NumAttempts: 1, TimeoutDelay: 20 * time.Millisecond}
	read := func(i int) (time.Duration, error) {
		start := time.Now()
		err := s.Query("SELECT field0 FROM spec.usertable WHERE y_id = ?", fmt.Sprintf("user%d", i)).
			Idempotent(true).SetSpeculativeExecutionPolicy(sp).Exec()
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
	var wg sync.WaitGroup
	var mu sync.Mutex
	var worst time.Duration
	var errs []error
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
