package speculative

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRecorderQuantiles(t *testing.T) {
	clk := newFakeClock()
	r, err := NewRecorder(RecorderConfig{Clock: clk, MinSamples: 100})
	require.NoError(t, err)
	for i := 1; i <= 99; i++ {
		r.Record(time.Duration(i) * time.Millisecond)
	}
	_, ok := r.LatencyQuantile(0.95)
	assert.False(t, ok, "fewer than MinSamples")
	r.Record(100 * time.Millisecond)
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 50 * time.Millisecond}, {0.95, 95 * time.Millisecond}, {0.99, 99 * time.Millisecond}, {1, 100 * time.Millisecond}} {
		got, ok := r.LatencyQuantile(c.q)
		require.True(t, ok)
		assert.GreaterOrEqual(t, got, c.want, "q=%v", c.q)
		assert.LessOrEqual(t, float64(got), float64(c.want)*1.07, "q=%v", c.q)
	}
	_, ok = r.LatencyQuantile(0)
	assert.False(t, ok)
	_, ok = r.LatencyQuantile(1.1)
	assert.False(t, ok)
}

func TestRecorderWindowSlides(t *testing.T) {
	clk := newFakeClock()
	r, err := NewRecorder(RecorderConfig{Clock: clk, Window: 4 * time.Second, MinSamples: 10})
	require.NoError(t, err)
	for i := 0; i < 100; i++ {
		r.Record(100 * time.Millisecond)
	}
	clk.Advance(2 * time.Second)
	for i := 0; i < 100; i++ {
		r.Record(10 * time.Millisecond)
	}
	q, ok := r.LatencyQuantile(0.95)
	require.True(t, ok)
	assert.InDelta(t, float64(100*time.Millisecond), float64(q), float64(7*time.Millisecond), "both sets in the window")

	clk.Advance(3 * time.Second) // first set is 5s old: out of a 4s window (sub-windows of 1s)
	q, ok = r.LatencyQuantile(0.95)
	require.True(t, ok)
	assert.InDelta(t, float64(10*time.Millisecond), float64(q), float64(time.Millisecond))

	clk.Advance(10 * time.Second)
	_, ok = r.LatencyQuantile(0.95)
	assert.False(t, ok, "everything expired")

	// a recycled sub-window starts from zero
	for i := 0; i < 10; i++ {
		r.Record(time.Second)
	}
	q, ok = r.LatencyQuantile(0.5)
	require.True(t, ok)
	assert.InDelta(t, float64(time.Second), float64(q), float64(70*time.Millisecond))
}

func TestRecorderObservesSuccessesAndCancelledLosers(t *testing.T) {
	clk := newFakeClock()
	r, err := NewRecorder(RecorderConfig{Clock: clk, MinSamples: 1})
	require.NoError(t, err)
	at := time.Unix(1_700_000_000, 0) // the observed times; samples are recorded at clk's now
	obs := func(d time.Duration, e error) {
		r.ObserveQuery(context.Background(), gocql.ObservedQuery{Start: at.Add(-d), End: at, Err: e})
	}
	obs(5*time.Millisecond, nil)
	obs(7*time.Millisecond, context.Canceled)
	obs(time.Second, errors.New("connection reset"))
	obs(time.Second, reqErr{gocql.ErrCodeOverloaded})
	r.ObserveBatch(context.Background(), gocql.ObservedBatch{Start: at.Add(-6 * time.Millisecond), End: at})
	q, ok := r.LatencyQuantile(1)
	require.True(t, ok)
	assert.Less(t, q, 8*time.Millisecond, "errors other than cancellation are not samples")
	assert.GreaterOrEqual(t, q, 7*time.Millisecond, "the cancelled loser is the largest sample")
	q, _ = r.LatencyQuantile(0.33)
	assert.Less(t, q, 5500*time.Microsecond, "3 samples: 5ms, 6ms, 7ms")
}

func TestRecorderConcurrent(t *testing.T) {
	r, err := NewRecorder(RecorderConfig{MinSamples: 1})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 5000; i++ {
				r.Record(time.Duration(g+1) * time.Millisecond)
				if i%500 == 0 {
					r.LatencyQuantile(0.95)
				}
			}
		}(g)
	}
	wg.Wait()
	q, ok := r.LatencyQuantile(0.95)
	require.True(t, ok)
	assert.InDelta(t, float64(4*time.Millisecond), float64(q), float64(300*time.Microsecond))
}
