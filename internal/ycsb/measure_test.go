package ycsb

import (
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCountAbove(t *testing.T) {
	h := hdrhistogram.New(1, 60_000_000, 3)
	for i := 0; i < 990; i++ {
		require.NoError(t, h.RecordValue(int64(1000+i*20))) // 1..20.8 ms
	}
	for i := 0; i < 10; i++ {
		require.NoError(t, h.RecordValue(150_000))
	}
	assert.EqualValues(t, 10, CountAbove(h, 50_000))
	assert.EqualValues(t, 10, CountAbove(h, 149_000))
	assert.EqualValues(t, 0, CountAbove(h, 150_000), "a value is not above itself")
	assert.EqualValues(t, 1000, CountAbove(h, 0))
	assert.EqualValues(t, 0, CountAbove(hdrhistogram.New(1, 1000, 3), 0))
}

// TestCountAboveHasNoStep shows what p99 cannot: with nine, ten and eleven
// stalled operations in a thousand, p99 jumps from the normal tail to the
// stall's length, while the count moves by one.
func TestCountAboveHasNoStep(t *testing.T) {
	stats := func(stalled int) (p99, slow int64) {
		h := hdrhistogram.New(1, 60_000_000, 3)
		for i := 0; i < 1000-stalled; i++ {
			require.NoError(t, h.RecordValue(int64(1000+i*20)))
		}
		for i := 0; i < stalled; i++ {
			require.NoError(t, h.RecordValue(150_000))
		}
		return Stats(h, 1000, 0).P99Us, CountAbove(h, 50_000)
	}
	p9, n9 := stats(9)
	p11, n11 := stats(11)
	assert.Less(t, p9, int64(25_000))
	assert.Greater(t, p11, int64(140_000))
	assert.EqualValues(t, 9, n9)
	assert.EqualValues(t, 11, n11)
}
