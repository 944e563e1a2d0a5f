//go:build !race

// The race detector's sync.Pool drops items on purpose, so allocation
// counts only mean something without it.

package route

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/tailroute/tailroute"
)

// TestIdempotentStateReused: a plain idempotent execution recycles its state
// (the pool hands it out again: no allocation; see also BenchmarkPickMark).
func TestIdempotentStateReused(t *testing.T) {
	p, _, _ := testRouter(t, 3, tailroute.WithRateControl(false))
	q := Query{Idempotent: true}
	allocs := testing.AllocsPerRun(200, func() {
		h := p.Pick(q)().(sel)
		h.Mark(nil)
	})
	assert.Zero(t, allocs)
}
