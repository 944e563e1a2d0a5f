package policy

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/track"
)

// TestC3WorkersNeedAnswers: W_s (here polled: 4) drains the queue only while
// the host answers. A fast host with two requests in flight ranks before an
// idle host 5x slower while its silence is within R_s; once it has owed
// responses for 3 x R_s (a pause, not yet a stall) its W_s is scaled by
// R_s/Silence and the idle host ranks first. (The paper's score: the tail
// term has tests of its own.)
func TestC3WorkersNeedAnswers(t *testing.T) {
	p, _, clk := testPolicy(t, 2, tailroute.WithRateControl(false), tailroute.WithProbe(0, time.Second), tailroute.WithJitter(0), tailroute.WithTailTerm(0))
	tr := p.r.Tracker()
	for i := 0; i < 50; i++ {
		tr.Host("h0").Observe(tr.Now(), 4*time.Millisecond, track.Success)
		tr.Host("h1").Observe(tr.Now(), 20*time.Millisecond, track.Success)
	}
	h0 := tr.Host("h0")
	h0.ServerWorkers(4)
	clk.Advance(time.Millisecond) // h0's last response lies before its requests
	as := []track.Attempt{h0.Begin(tr.Now()), h0.Begin(tr.Now())}
	clk.Advance(3 * time.Millisecond)
	assert.Equal(t, "h0", plan(p, &fakeQuery{})[0], "silent 3ms < R_s = 4ms: W_s = 4 holds")
	clk.Advance(9 * time.Millisecond)
	assert.Equal(t, "h1", plan(p, &fakeQuery{})[0], "silent 12ms = 3 x R_s: W_s scaled to 4/3")
	for _, a := range as {
		h0.End(a)
	}
	h0.Observe(tr.Now(), 4*time.Millisecond, track.Success)
	assert.Equal(t, "h0", plan(p, &fakeQuery{})[0], "answered again: W_s = 4")
}
