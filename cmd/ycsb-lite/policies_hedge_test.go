package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tailroute/tailroute/speculative"
)

func TestLookupHedgedVariants(t *testing.T) {
	for _, name := range []string{"tailroute+hedge", "tailroute+hedge-nocap", "tailroute+hedge-noload", "tailroute+hedge-nofire", "tailroute+hedge-cap200msx3", "datastax+hedge-cap1sx2"} {
		spec, ok, err := lookupHedged(name)
		require.NoError(t, err, name)
		assert.True(t, ok)
		assert.Equal(t, name, spec.name)
	}
	for _, name := range []string{"tailroute+hedge-cap", "tailroute+hedge-capx3", "tailroute+hedge-cap1s", "tailroute+hedge-foo"} {
		_, ok, err := lookupHedged(name)
		assert.True(t, ok, name)
		assert.ErrorContains(t, err, "+hedge-cap<horizon>x<factor>", name)
	}
	_, ok, _ := lookupHedged("tailroute")
	assert.False(t, ok)
}

// TestNoFireVariant: +hedge-nofire arms executions with a delay of an hour,
// so its hedges never fire within a run.
func TestNoFireVariant(t *testing.T) {
	v, err := parseHedgeVariant("-nofire")
	require.NoError(t, err)
	h, err := speculative.New(v.opts...)
	require.NoError(t, err)
	h.Refresh()
	assert.Equal(t, time.Hour, h.Delay())
}
