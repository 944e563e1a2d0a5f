package simtest

import "testing"

// TokenAwareSession is one session of a driver under test, as
// TokenAwareness needs it: Exec runs stmt with args (a non-nil key is set
// with Query.RoutingKey) and Unrouted reads its policy's Counters().Unrouted.
type TokenAwareSession struct {
	Exec     func(stmt string, key []byte, args ...any) error
	Unrouted func() uint64
}

// TokenAwareness checks what a query needs to be routed by token (the
// README's rule), on keyspace ks with table usertable (y_id text PRIMARY
// KEY, field0 text): plain is a session without ClusterConfig.Keyspace,
// withKS one whose ClusterConfig.Keyspace is ks. A bound ? marker on a
// qualified table, or a routing key with the session's keyspace, is routed;
// a literal value, or a routing key without a keyspace, counts as Unrouted.
func TokenAwareness(t *testing.T, ks string, plain, withKS TokenAwareSession) {
	t.Helper()
	cases := []struct {
		name     string
		s        TokenAwareSession
		stmt     string
		key      []byte
		args     []any
		unrouted uint64
	}{
		{"bound marker, qualified table", plain, "SELECT field0 FROM " + ks + ".usertable WHERE y_id = ?", nil, []any{"user1"}, 0},
		{"literal value", plain, "SELECT field0 FROM " + ks + ".usertable WHERE y_id = 'user1'", nil, nil, 1},
		{"routing key, no keyspace", plain, "SELECT field0 FROM " + ks + ".usertable WHERE y_id = 'user1'", []byte("user1"), nil, 1},
		{"routing key, session keyspace", withKS, "SELECT field0 FROM usertable WHERE y_id = 'user1'", []byte("user1"), nil, 0},
		{"literal value, session keyspace", withKS, "SELECT field0 FROM usertable WHERE y_id = 'user1'", nil, nil, 1},
		{"bound marker, session keyspace", withKS, "SELECT field0 FROM usertable WHERE y_id = ?", nil, []any{"user1"}, 0},
	}
	for _, c := range cases {
		before := c.s.Unrouted()
		if err := c.s.Exec(c.stmt, c.key, c.args...); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := c.s.Unrouted() - before; got != c.unrouted {
			t.Errorf("%s: Unrouted grew by %d, want %d", c.name, got, c.unrouted)
		}
	}
}
