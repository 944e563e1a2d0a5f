package route

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type fakeCfg struct{ name string }

type fakeSession struct{ closed bool }

func (s *fakeSession) Closed() bool { return s.closed }

func TestSessions(t *testing.T) {
	var g Sessions[fakeCfg, fakeSession, *fakeSession]
	cfg, other := &fakeCfg{"a"}, &fakeCfg{"b"}
	require.NoError(t, g.Wire(cfg))
	assert.Same(t, cfg, g.Wired())
	assert.ErrorContains(t, g.Wire(cfg), "already wired to this cfg")
	assert.ErrorContains(t, g.Wire(other), "already wired to another")
	assert.Same(t, cfg, g.Wired(), "a refused Wire changes nothing")

	var forgot, refused int
	forget, refuse := func() { forgot++ }, func() { refused++ }
	s1, s2, s3 := &fakeSession{}, &fakeSession{}, &fakeSession{}
	assert.False(t, g.Admit(nil, forget, refuse))
	assert.True(t, g.Admit(s1, forget, refuse), "first session")
	assert.False(t, g.Admit(s1, forget, refuse), "the session already served")
	assert.Zero(t, forgot)

	s1.closed = true
	assert.True(t, g.Admit(s2, forget, refuse), "a new session after the first closed")
	assert.Equal(t, 1, forgot, "served from a clean slate")

	assert.False(t, g.Admit(s3, forget, refuse), "a second session while s2 is open")
	assert.Equal(t, 1, refused)
	assert.NoError(t, g.Err(), "no error until the adapter refuses")
	err := errors.New("refused")
	assert.True(t, g.Refuse(err))
	assert.False(t, g.Refuse(errors.New("again")), "the first refusal stays")
	assert.Same(t, err, g.Err())
	s2.closed = true
	assert.False(t, g.Admit(s3, forget, refuse), "nothing is served after a refusal")
	assert.Equal(t, 1, forgot)
}
