// Policy scenarios of the sessions a Policy serves: a second session
// refused, and a session opened again after its predecessor closed.

package contract

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tailroute/tailroute/internal/simtest"
	"github.com/tailroute/tailroute/sim"
)

// SecondSessionRefused checks the rule of a Policy shared by two sessions
// (the adapters' Init): the first, serving, session keeps working (writes
// and reads, before and after the second closes); the second gets no hosts
// (the driver's NoConnections); one log line names the problem and the
// fix; Err returns it.
func SecondSessionRefused(t *testing.T, d Driver) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 6, Model: sim.ServiceModel{ZeroService: true}})
	p := d.policy(t)
	log := &Log{}
	open := d.Sessions(t, c, p, Config{Log: log})
	first, err := open()
	require.NoError(t, err)
	defer first.Close()
	d.createKeyspace(t, first, p, "shared", "{'class':'SimpleStrategy','replication_factor':2}")

	const read = "SELECT field0 FROM shared.usertable WHERE y_id = 'a'"
	require.NoError(t, first.Exec("INSERT INTO shared.usertable (y_id, field0) VALUES ('a', 'b')", nil))
	require.NoError(t, p.Err())

	second, err := open()
	require.NoError(t, err, "the driver's Init cannot refuse: the second session is created")
	defer second.Close()
	err = p.Err()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "second gocql.Session")
	lines := log.Find("second gocql.Session")
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], "give each session its own Policy", "the log line says how to fix it")

	require.NoError(t, first.Exec("INSERT INTO shared.usertable (y_id, field0) VALUES ('a', 'c')", nil), "the first session keeps working")
	for range 20 {
		v, err := first.Read(read)
		require.NoError(t, err, "the first session keeps serving reads")
		assert.Equal(t, "c", v)
	}
	_, err = second.Read(read)
	assert.ErrorIs(t, err, d.NoConnections, "the second session gets no hosts")
	assert.Equal(t, 3, len(p.Stats()), "the first session's hosts are kept")
	second.Close()
	_, err = first.Read(read)
	require.NoError(t, err, "closing the second session leaves the first alone")
}

// SessionAfterClose: a config reused after its session closed (a
// reconnect) is served from a clean slate.
func SessionAfterClose(t *testing.T, d Driver) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 7, Model: sim.ServiceModel{ZeroService: true}})
	p := d.policy(t)
	open := d.Sessions(t, c, p, Config{})
	s1, err := open()
	require.NoError(t, err)
	d.createKeyspace(t, s1, p, "again", "{'class':'SimpleStrategy','replication_factor':2}")
	require.NoError(t, s1.Exec("INSERT INTO again.usertable (y_id, field0) VALUES ('a', 'b')", nil))
	s1.Close()
	s2, err := open()
	require.NoError(t, err)
	defer s2.Close()
	v, err := s2.Read("SELECT field0 FROM again.usertable WHERE y_id = 'a'")
	require.NoError(t, err)
	assert.Equal(t, "b", v)
	assert.NoError(t, p.Err())
	st := p.Stats()
	assert.Len(t, st, 3)
	var n uint64
	for _, s := range st {
		n += s.TotalAttempts
	}
	assert.EqualValues(t, 1, n, "only the new session's attempt: the hosts started from a clean slate")
}
