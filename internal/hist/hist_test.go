package hist

import (
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBucketsCoverValuesWithinSixPercent(t *testing.T) {
	prev := -1
	for v := int64(0); v < 1<<42; v = v + 1 + v/7 {
		i := bucketOf(v)
		require.GreaterOrEqual(t, i, prev, "buckets are monotonic (v=%d)", v)
		prev = i
		up := bucketUpper(i)
		if v < 1<<41 {
			require.GreaterOrEqual(t, up, v, "v=%d", v)
			require.LessOrEqual(t, float64(up-v), float64(v)/16+1, "v=%d bucket upper %d", v, up)
		}
		if i > 0 {
			require.Less(t, bucketUpper(i-1), v, "v=%d is above the previous bucket", v)
		}
	}
	assert.Equal(t, Buckets-1, bucketOf(1<<50))
	assert.Equal(t, 0, bucketOf(-5))
}

func TestCountsQuantileRanks(t *testing.T) {
	var m Counts
	assert.Equal(t, time.Duration(0), m.Quantile(0, 0.5), "empty")
	for v := int64(1); v <= 10; v++ { // exact buckets below 32ns
		m[bucketOf(v)]++
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.01, 1}, {0.5, 5}, {0.55, 6}, {0.94, 9}, {0.95, 10}, {1, 10}} {
		assert.Equal(t, c.want, m.Quantile(10, c.q), "q=%v: rank round(q*n), at least 1", c.q)
	}
	assert.Equal(t, time.Duration(10), m.Quantile(20, 1), "n above the counts: the last sample")
}

func TestRollingQuantileWithinBucketWidth(t *testing.T) {
	var r Rolling
	r.Init(time.Second, 2)
	now := 5 * time.Second
	for _, x := range rand.Perm(1000) {
		r.Record(now, time.Duration(x+1)*time.Microsecond)
	}
	for _, q := range []float64{0.5, 0.9, 0.95, 0.99, 1} {
		d, n := r.Quantile(now, q)
		require.EqualValues(t, 1000, n)
		want := time.Duration(q*1000) * time.Microsecond
		assert.GreaterOrEqual(t, d, want, "q=%v", q)
		assert.LessOrEqual(t, float64(d), float64(want)*(1+1.0/16), "q=%v", q)
	}
}

func TestRollingWindowSlides(t *testing.T) {
	var r Rolling
	r.Init(time.Second, 3) // the current second and the two before it
	r.Record(10*time.Second, time.Millisecond)
	r.Record(11*time.Second+500*time.Millisecond, 2*time.Millisecond)
	assert.EqualValues(t, 2, r.Count(12*time.Second+999*time.Millisecond))
	assert.EqualValues(t, 1, r.Count(13*time.Second), "the first sub-window left the window")
	d, n := r.Quantile(13*time.Second, 0.5)
	assert.EqualValues(t, 1, n)
	assert.InEpsilon(t, float64(2*time.Millisecond), float64(d), 1.0/16)
	assert.EqualValues(t, 0, r.Count(14*time.Second), "everything expired")

	// a recycled slot starts from zero
	r.Record(16*time.Second, time.Second)
	d, n = r.Quantile(16*time.Second, 1)
	assert.EqualValues(t, 1, n)
	assert.InEpsilon(t, float64(time.Second), float64(d), 1.0/16)

	// a sample dated before its slot's sub-window is dropped
	r.Record(13*time.Second, time.Hour)
	d, _ = r.Quantile(16*time.Second, 1)
	assert.Less(t, d, 2*time.Second)
	assert.EqualValues(t, 1, r.Count(16*time.Second))

	// a reader behind the writers sees no sub-window from its future
	assert.EqualValues(t, 1, r.Count(12*time.Second), "only the 2ms sample of second 11")

	r.Reset()
	assert.EqualValues(t, 0, r.Count(16*time.Second))
	r.Record(16*time.Second, time.Millisecond)
	assert.EqualValues(t, 1, r.Count(16*time.Second), "recording resumes after Reset")

	var neg Rolling
	neg.Init(time.Second, 2)
	neg.Record(-time.Hour, time.Millisecond)
	assert.EqualValues(t, 1, neg.Count(0), "times before 0 count as 0")
}

func TestAddToMergesHistograms(t *testing.T) {
	var a, b Rolling
	a.Init(time.Second, 2)
	b.Init(time.Second, 2)
	for i := 0; i < 90; i++ {
		a.Record(time.Second, time.Millisecond)
	}
	for i := 0; i < 10; i++ {
		b.Record(time.Second, 100*time.Millisecond)
	}
	var m Counts
	n := a.AddTo(time.Second, &m) + b.AddTo(time.Second, &m)
	require.EqualValues(t, 100, n)
	assert.InEpsilon(t, float64(time.Millisecond), float64(m.Quantile(n, 0.9)), 1.0/16)
	assert.InEpsilon(t, float64(100*time.Millisecond), float64(m.Quantile(n, 0.91)), 1.0/16)
}

// TestRollingConcurrent records across sub-window boundaries from several
// goroutines while reading; with -race it checks the synchronisation, and no
// sample of the live window is lost.
func TestRollingConcurrent(t *testing.T) {
	var r Rolling
	r.Init(time.Millisecond, 4)
	const g, per = 4, 5000
	var wg sync.WaitGroup
	for k := 0; k < g; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				now := time.Duration(i) * time.Microsecond // 5 sub-windows
				r.Record(now, time.Duration(k+1)*time.Millisecond)
				if i%500 == 0 {
					r.Quantile(now, 0.95)
				}
			}
		}(k)
	}
	wg.Wait()
	end := time.Duration(per-1) * time.Microsecond
	n := r.Count(end)
	assert.LessOrEqual(t, n, uint64(g*per))
	assert.GreaterOrEqual(t, n, uint64(g*3000), "the last 3 full sub-windows and the current one")
	d, _ := r.Quantile(end, 1)
	assert.InEpsilon(t, float64(4*time.Millisecond), float64(d), 1.0/16)
}

func BenchmarkRecordParallel(b *testing.B) {
	var r Rolling
	r.Init(time.Second, 2)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			r.Record(time.Second, time.Duration(i%10000)*time.Microsecond)
		}
	})
}

func BenchmarkQuantile(b *testing.B) {
	var r Rolling
	r.Init(time.Second, 2)
	for i := 0; i < 100000; i++ {
		r.Record(time.Second, time.Duration(i%10000)*time.Microsecond)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r.Quantile(time.Second, 0.95)
	}
}
