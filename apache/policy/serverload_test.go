package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/simtest"
	"github.com/tailroute/tailroute/sim"
)

// TestServerLoadV2: with WithServerLoad every host is polled through its
// own pinned query (SetHostID: a poll answered by another host is an error,
// so samples prove the pinning), the samples reach each host's state, and
// the polls are neither user traffic for the tracker nor counted in os_s.
func TestServerLoadV2(t *testing.T) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 5, Model: sim.ServiceModel{Workers: 2, MeanService: time.Millisecond}})
	p, err := New(tailroute.WithServerLoad(50 * time.Millisecond))
	require.NoError(t, err)
	assert.Equal(t, 50*time.Millisecond, p.r.Config().ServerLoad)
	simSession(t, c, p)
	require.Eventually(t, func() bool {
		st := p.Stats()
		if len(st) != 3 {
			return false
		}
		for _, h := range st {
			if !h.HasServerLoad {
				return false
			}
		}
		return true
	}, 10*time.Second, 10*time.Millisecond, "every host has a polled sample")
	lc := p.ServerLoadCounters()
	t.Logf("counters %+v", lc)
	assert.GreaterOrEqual(t, lc.Samples, uint64(3))
	assert.Empty(t, lc.Skipped)
	for _, h := range p.Stats() {
		assert.Zero(t, h.TotalAttempts, "%s: polls are not user traffic", h.Address)
		assert.Zero(t, h.InFlight, h.Address)
		assert.True(t, strings.HasPrefix(h.Address, "127.0.0."), h.Address)
	}
}
