package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLookupHedgedVariants(t *testing.T) {
	for _, name := range []string{"tailroute+hedge", "tailroute+hedge-nocap", "tailroute+hedge-noload", "tailroute+hedge-cap200msx3", "datastax+hedge-cap1sx2"} {
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
