package hedge

import (
	"testing"

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
	}
	assert.Equal(t, histBuckets-1, bucketOf(1<<50))
	assert.Equal(t, 0, bucketOf(-5))
}
