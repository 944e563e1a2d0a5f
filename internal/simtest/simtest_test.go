package simtest

import (
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/tailroute/tailroute/sim"
)

func TestLoadResult(t *testing.T) {
	r := LoadResult{Lat: []time.Duration{1, 2, 3, 4, 10}}
	assert.Equal(t, 2, r.Over(3))
	assert.Equal(t, time.Duration(1), r.Q(0))
	assert.Equal(t, time.Duration(3), r.Q(0.5))
	assert.Equal(t, time.Duration(10), r.Q(1))
	assert.Zero(t, LoadResult{}.Q(0.5))
}

func TestShareAndSet(t *testing.T) {
	assert.InDelta(t, 0.25, Share(map[string]uint64{"a": 1, "b": 3}, "a"), 1e-12)
	assert.Equal(t, []string{"a", "b"}, Set([]string{"b", "a", "b"}))
}

func TestLoops(t *testing.T) {
	c := Start(t, sim.Config{Nodes: 1, Seed: 1, Model: sim.ServiceModel{ZeroService: true}})
	served, errs := ClosedLoop(c, 10, 2, func(*rand.Rand) error { return errors.New("x") })
	assert.Len(t, errs, 10)
	assert.Equal(t, map[string]uint64{c.Hosts()[0]: 0}, served, "nothing was sent to the cluster")

	until := time.Now().Add(20 * time.Millisecond)
	var late atomic.Int64
	_, errs = ClosedLoopUntil(c, until, 2, func(*rand.Rand) error {
		if !time.Now().Before(until) {
			late.Add(1)
		}
		time.Sleep(time.Millisecond)
		return errors.New("x")
	})
	assert.NotEmpty(t, errs, "requests run until the deadline")
	assert.Zero(t, late.Load(), "no request starts at or after the deadline")
	assert.False(t, time.Now().Before(until), "returns after the deadline")

	r := OpenLoop(1000, 20*time.Millisecond, func(i int) error {
		if i%2 == 1 {
			return errors.New("odd")
		}
		return nil
	})
	assert.Equal(t, 20, len(r.Lat)+r.Errs, "one request per millisecond for 20ms")
	assert.Equal(t, r.Errs, len(r.Lat))
}

func TestStallCaught(t *testing.T) {
	base := time.Unix(1000, 0)
	at := func(ms int, lat time.Duration) Timed {
		return Timed{At: base.Add(time.Duration(ms) * time.Millisecond), Lat: lat}
	}
	// stalls [4.5s, 5s) and [9.5s, 10s); requests that can wait > 300ms
	// for one start in [4.4s, 4.8s] or [9.4s, 9.8s] (margin 100ms)
	r := LoadResult{OK: []Timed{
		at(100, time.Millisecond), at(200, 400*time.Millisecond), at(1000, time.Millisecond), at(2000, time.Millisecond), // out: 1 slow of 4
		at(4400, 450*time.Millisecond), at(4600, 350*time.Millisecond), at(4700, time.Millisecond), at(4800, time.Millisecond), // in: 2 slow of 4
		at(4900, 350*time.Millisecond),                             // out: too late to wait 300ms for the stall
		at(9500, 450*time.Millisecond), at(9850, time.Millisecond), // in, out
	}}
	s := r.StallCaught(base, 5*time.Second, 500*time.Millisecond, 300*time.Millisecond, 100*time.Millisecond)
	assert.InDelta(t, 3-5*2.0/6, s.Caught, 1e-9)
	s.Caught = 0
	assert.Equal(t, Stalled{SlowIn: 3, In: 5, SlowOut: 2, Out: 6, NoiseShareOfOut: 2.0 / 6}, s)
}
