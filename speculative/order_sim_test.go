package speculative

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute"
)

// recordingSpec is a SpeculativeExecutionPolicy that counts how often gocql
// consults it and never speculates.
type recordingSpec struct{ attempts, delays atomic.Int64 }

func (r *recordingSpec) Attempts() int        { r.attempts.Add(1); return 0 }
func (r *recordingSpec) Delay() time.Duration { r.delays.Add(1); return time.Second }

// TestGocqlPicksBeforeReadingSpec pins the order the wrapped policy relies
// on (doc.go, "What gocql does"): gocql's executeQuery calls Pick, then
// reads the query's SpeculativeExecutionPolicy, so the policy Pick sets is
// the one this execution uses. Each query starts with a policy of its own
// that must never be consulted; if a gocql upgrade read the policy before
// Pick, that policy would be asked for Attempts and no execution would
// hedge, and this test fails.
func TestGocqlPicksBeforeReadingSpec(t *testing.T) {
	c := startSim(t, 3, "127.0.0.19")
	keys := setupData(t, c, 3, 20)
	h, err := New(tailroute.WithSource(&fakeSource{}), tailroute.WithDelayBounds(time.Microsecond, time.Microsecond),
		tailroute.WithBudget(1, time.Minute), tailroute.WithBurstCap(0, 1, 0))
	require.NoError(t, err)
	s, _ := newSimSession(t, c, simKS, h, func(cl *gocql.ClusterConfig) {
		cl.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: 2}
	})
	rec := &recordingSpec{}
	st0 := h.Stats()
	const n = 20
	for i := 0; i < n; i++ {
		var f string
		q := s.Query(readStmt, keys[i%len(keys)]).Idempotent(true).SetSpeculativeExecutionPolicy(rec)
		require.NoError(t, q.Scan(&f))
	}
	st1 := h.Stats()
	assert.Zero(t, rec.attempts.Load(), "gocql consulted the query's own policy: it read it before Pick")
	assert.Zero(t, rec.delays.Load())
	assert.EqualValues(t, n, st1.Armed-st0.Armed, "every execution armed")
	assert.Greater(t, st1.Hedges-st0.Hedges, uint64(0), "a 1µs delay makes hedges fire: the armed policy was used")
}
