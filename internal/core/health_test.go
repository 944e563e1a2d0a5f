package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDemoteUnhealthyWeights: with two healthy replicas and one at success
// rate s, the unhealthy one stays eligible in (s^3)/(2+s^3) of the picks
// (the cascade's weighted pick); within tolerance nothing is demoted, and
// when all fail alike neither is.
func TestDemoteUnhealthyWeights(t *testing.T) {
	r := Rand(3)
	for _, s := range []float64{0.5, 0.8, 0} {
		kept := 0
		const n = 40000
		for i := 0; i < n; i++ {
			c := cands(1, 1, 1)
			c[0].Success, c[1].Success, c[2].Success = 1, 1, float32(s)
			d := DemoteUnhealthy(c, &r, 0.05)
			require.LessOrEqual(t, d, 1)
			require.False(t, c[0].Demoted || c[1].Demoted, "healthy replicas are never demoted")
			if !c[2].Demoted {
				kept++
			}
		}
		w := s * s * s
		assert.InDelta(t, w/(2+w), float64(kept)/n, 0.01, "success rate %v", s)
	}
	for i := 0; i < 1000; i++ {
		c := cands(1, 1, 1)
		c[0].Success, c[1].Success, c[2].Success = 1, 0.99, 0.96
		require.Equal(t, 0, DemoteUnhealthy(c, &r, 0.05), "within tolerance")
		c = cands(1, 1)
		c[0].Success, c[1].Success = 0.5, 0.5
		require.Equal(t, 0, DemoteUnhealthy(c, &r, 0.05), "all failing alike")
		c = cands(1, 1)
		c[0].Success, c[1].Success = 0.2, 0.5
		DemoteUnhealthy(c, &r, 1)
		require.False(t, c[0].Demoted, "tolerance 1: rule off")
	}
}

// TestDemotedGoLastInEveryOrdering: a demoted replica is behind the others
// in C3 order even with the best score, and in P2C's behind busy ones too
// and never one of the two choices even with the fewest requests in flight.
func TestDemotedGoLastInEveryOrdering(t *testing.T) {
	r := Rand(9)
	c := cands(1, 5, 3)
	c[0].Demoted = true
	assert.Equal(t, 2, OrderByScore(c, &r))
	assert.Equal(t, []int32{2, 1, 0}, hosts(c))

	c = cands(1, 5, 3, 4)
	c[0].Demoted = true
	c[1].Busy = true
	assert.Equal(t, 2, OrderP2C(c, &r), "busy rule among the healthy: 2 of 3 not busy")
	assert.EqualValues(t, 1, c[2].Host, "busy behind the healthy")
	assert.EqualValues(t, 0, c[3].Host, "demoted behind the busy")

	for i := 0; i < 1000; i++ {
		c := cands(0, 0, 0)
		c[0].InFlight, c[1].InFlight, c[2].InFlight = 0, 5, 10
		c[0].Demoted = true
		assert.Equal(t, 2, OrderP2C(c, &r))
		require.EqualValues(t, 0, c[2].Host)
		require.EqualValues(t, 1, c[0].Host, "less loaded of the two healthy")
	}
}

func TestPromoteHost(t *testing.T) {
	c := cands(1, 2, 3)
	assert.True(t, PromoteHost(c, 2))
	assert.Equal(t, []int32{2, 0, 1}, hosts(c), "the probed host first, the others in order")
	assert.False(t, PromoteHost(c, 7), "not a candidate")
	assert.Equal(t, []int32{2, 0, 1}, hosts(c))
}
