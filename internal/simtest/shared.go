package simtest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SharedSession is one session of a driver under test, as
// SecondSessionRefused needs it: Exec runs a statement, Read scans one
// text column of a one-row query.
type SharedSession struct {
	Exec func(stmt string) error
	Read func(stmt string) (string, error)
}

// SharedPolicy is what SecondSessionRefused needs of the policy and of the
// driver: the policy's Err and host count, the log lines containing sub,
// the second session (created from the first one's ClusterConfig after the
// first is serving) and its Close, and the driver's "no hosts" error.
type SharedPolicy struct {
	Err           func() error
	Hosts         func() int
	LogLines      func(sub string) []string
	OpenSecond    func() (SharedSession, func(), error)
	NoConnections error
}

// SecondSessionRefused checks the rule of a Policy shared by two sessions
// (the adapters' Init): the first, serving, session keeps working (writes
// and reads, before and after the second closes); the second gets no hosts
// (NoConnections); one log line names the problem and the fix; Err returns
// it. first must be connected to a cluster of nhosts nodes with keyspace
// shared and table usertable (y_id text PRIMARY KEY, field0 text).
func SecondSessionRefused(t *testing.T, first SharedSession, p SharedPolicy, nhosts int) {
	t.Helper()
	const read = "SELECT field0 FROM shared.usertable WHERE y_id = 'a'"
	require.NoError(t, first.Exec("INSERT INTO shared.usertable (y_id, field0) VALUES ('a', 'b')"))
	require.NoError(t, p.Err())

	second, closeSecond, err := p.OpenSecond()
	require.NoError(t, err, "the driver's Init cannot refuse: the second session is created")
	defer closeSecond()
	err = p.Err()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "second gocql.Session")
	lines := p.LogLines("second gocql.Session")
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], "give each session its own Policy", "the log line says how to fix it")

	require.NoError(t, first.Exec("INSERT INTO shared.usertable (y_id, field0) VALUES ('a', 'c')"), "the first session keeps working")
	for range 20 {
		v, err := first.Read(read)
		require.NoError(t, err, "the first session keeps serving reads")
		assert.Equal(t, "c", v)
	}
	_, err = second.Read(read)
	assert.ErrorIs(t, err, p.NoConnections, "the second session gets no hosts")
	assert.Equal(t, nhosts, p.Hosts(), "the first session's hosts are kept")
	closeSecond()
	_, err = first.Read(read)
	require.NoError(t, err, "closing the second session leaves the first alone")
}
