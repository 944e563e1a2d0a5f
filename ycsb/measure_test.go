package ycsb

import (
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTailMean(t *testing.T) {
	h := hdrhistogram.New(1, 60_000_000, 3)
	for i := 0; i < 990; i++ {
		require.NoError(t, h.RecordValue(1000))
	}
	for i := 0; i < 10; i++ {
		require.NoError(t, h.RecordValue(100_000))
	}
	// The slowest 1 % are the ten 100 ms values.
	assert.InEpsilon(t, 100_000, TailMean(h, 0.01), 0.001)
	// The slowest 2 %: ten at 100 ms, ten at 1 ms.
	assert.InEpsilon(t, 50_500, TailMean(h, 0.02), 0.001)
	// A share that is not a whole number of values takes part of the boundary bucket.
	assert.InEpsilon(t, (10*100_000+5*1000)/15.0, TailMean(h, 0.015), 0.001)
	assert.InEpsilon(t, h.Mean(), TailMean(h, 1), 0.001)

	assert.Zero(t, TailMean(h, 0))
	assert.Zero(t, TailMean(h, 1.5))
	assert.Zero(t, TailMean(hdrhistogram.New(1, 1000, 3), 0.01))
}

// TestTailMeanHasNoStep shows what p99 cannot: with nine, ten and eleven
// stalled operations in a thousand, p99 jumps from the normal tail to the
// stall's length, while the tail mean moves by one operation's share.
func TestTailMeanHasNoStep(t *testing.T) {
	stats := func(stalled int) LatencyStats {
		h := hdrhistogram.New(1, 60_000_000, 3)
		for i := 0; i < 1000-stalled; i++ {
			require.NoError(t, h.RecordValue(int64(1000+i*20))) // 1..21 ms
		}
		for i := 0; i < stalled; i++ {
			require.NoError(t, h.RecordValue(150_000))
		}
		return Stats(h, 1000, 0)
	}
	s9, s10, s11 := stats(9), stats(10), stats(11)
	assert.Less(t, s9.P99Us, int64(25_000))
	assert.Greater(t, s11.P99Us, int64(140_000))
	assert.Greater(t, s10.Tail99Us, s9.Tail99Us)
	assert.Less(t, s10.Tail99Us-s9.Tail99Us, 20_000.0, "one more stalled operation in ten moves the tail mean by at most a tenth of the stall")
	assert.InEpsilon(t, 150_000, s11.Tail99Us, 0.01)
}
