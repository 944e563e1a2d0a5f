package route

import (
	"errors"
	"testing"
	"unsafe"

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
	assert.Same(t, err, g.Err(), "the refusal stays reported")
	s2.closed = true
	s4 := &fakeSession{}
	assert.True(t, g.Admit(s4, forget, refuse), "a new session once the served one closed")
	assert.Equal(t, 2, forgot)
	assert.Same(t, err, g.Err(), "the refusal stays reported")
}

// stmt is a driver statement as both drivers shape theirs: the session in
// an unexported pointer field named session.
type stmt struct {
	session *fakeSession
}

func TestServes(t *testing.T) {
	var g Sessions[fakeCfg, fakeSession, *fakeSession]
	s1, s2 := &fakeSession{}, &fakeSession{}
	assert.True(t, g.Admit(s1, func() {}, func() {}))
	assert.True(t, g.Serves(&stmt{session: s2}), "every query is served until a session is refused")
	assert.False(t, g.Admit(s2, func() {}, func() { g.Refuse(errors.New("second")) }))
	assert.True(t, g.Serves(&stmt{session: s1}), "the served session keeps its hosts")
	assert.False(t, g.Serves(&stmt{session: s2}), "the refused session gets none")
	assert.True(t, g.Serves(nil), "a query whose session cannot be told is served")
	assert.True(t, g.Serves(&struct{ x int }{}), "a statement without a session field is served")
	assert.Equal(t, unsafe.Pointer(s1), SessionOf(&stmt{session: s1}))
	assert.Nil(t, SessionOf(stmt{session: s1}), "not a pointer")
}
