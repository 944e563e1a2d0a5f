package tracker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A ManualClock's timer fires when the clock reaches it, once, and can be
// stopped and rearmed.
func TestManualClockTimer(t *testing.T) {
	clk := NewManualClock(0)
	tm := clk.NewTimer(10 * time.Millisecond)
	clk.Advance(9 * time.Millisecond)
	select {
	case <-tm.C():
		t.Fatal("fired early")
	default:
	}
	clk.Sleep(time.Millisecond)
	assert.Equal(t, 10*time.Millisecond, <-tm.C())
	clk.Advance(time.Hour)
	select {
	case <-tm.C():
		t.Fatal("fired twice")
	default:
	}
	tm.Reset(time.Millisecond)
	tm.Stop()
	clk.Advance(time.Second)
	assert.Zero(t, clk.Timers())
	select {
	case <-tm.C():
		t.Fatal("fired after Stop")
	default:
	}
}
