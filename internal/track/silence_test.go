package track

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestMaxSilence(t *testing.T) {
	tr, clk := newTest(t, nil)
	a, b := tr.Host("a"), tr.Host("b")
	assert.Zero(t, tr.MaxSilence(), "nothing in flight")

	clk.Advance(time.Second)
	att := a.Begin(tr.Now()) // a owes a response from now on
	clk.Advance(30 * time.Millisecond)
	assert.Equal(t, 30*time.Millisecond, tr.MaxSilence())

	bAtt := b.Begin(tr.Now())
	clk.Advance(10 * time.Millisecond)
	b.End(bAtt)
	b.Observe(tr.Now(), 10*time.Millisecond, Success)
	assert.Equal(t, 40*time.Millisecond, tr.MaxSilence(), "the most silent host counts")

	a.End(att)
	a.Observe(tr.Now(), time.Millisecond, Cancelled) // given up on: orphaned, not in flight
	clk.Advance(time.Second)
	assert.Zero(t, tr.MaxSilence(), "orphaned attempts alone do not make a host silent")
}
