package vsim

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every ablation strategy is wired: with its rule removed the engine
// routes differently from tailroute in at least one of three cells that
// exercise the rules (a slow server with pauses; failures; a slow server
// that recovers; 64 clients on fluctuating servers, each client one of
// many), or the rule is one these cells cannot reach (named in unreached,
// with why; none today).
func TestEveryAblationChangesTheRun(t *testing.T) {
	unreached := map[string]string{}
	cells := []Config{small("tailroute"), small("tailroute"), small("tailroute"), small("tailroute")}
	cells[0].PauseEvery, cells[0].PauseFor = 500*time.Millisecond, 60*time.Millisecond
	cells[0].FluctuationT = 50 * time.Millisecond
	cells[1].Slow = nil
	cells[1].Failing = []Failing{{Server: 2, Rate: 1}}
	cells[2].Slow = []Slow{{Server: 0, Factor: 10, Until: 500 * time.Millisecond}}
	cells[3].Slow, cells[3].Clients, cells[3].Requests = nil, 64, 10000
	cells[3].FluctuationT = 100 * time.Millisecond
	base := make([]string, len(cells))
	for i, c := range cells {
		res, err := Run(c)
		require.NoError(t, err)
		base[i] = fingerprint(res)
	}
	names := strings.Split(AblationNames(), ",")
	require.NotEmpty(t, names)
	for _, n := range names {
		changed := false
		for i, c := range cells {
			c.Strategy = n
			res, err := Run(c)
			require.NoError(t, err, n)
			changed = changed || fingerprint(res) != base[i]
		}
		if why, ok := unreached[n]; ok {
			assert.False(t, changed, "%s changes these cells now: drop it from unreached (%s)", n, why)
			continue
		}
		assert.True(t, changed, "%s routes as tailroute does", n)
	}
}
