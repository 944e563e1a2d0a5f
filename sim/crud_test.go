package sim

import (
	"errors"
	"fmt"
	"sort"
	"testing"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sessionOn returns a session that only sends queries to host ip.
func sessionOn(t *testing.T, c *Cluster, ks, ip string) *gocql.Session {
	t.Helper()
	cl := gocql.NewCluster(ip) // contact point and only queried host
	cl.Port = c.Port()
	cl.Keyspace = ks
	cl.HostFilter = gocql.WhiteListHostFilter(ip)
	s, err := cl.CreateSession()
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

func TestPreparedInsertThenSelectOnEveryReplica(t *testing.T) {
	c := startCluster(t, Config{Nodes: 5, Model: ServiceModel{ZeroService: true}})
	createYCSB(t, c, "ycsb", "{'class':'SimpleStrategy','replication_factor':3}", 4)
	s := newSession(t, c, "ycsb", true)
	for i := 0; i < 5; i++ {
		key := fmt.Sprintf("user%d", 1000+i)
		require.NoError(t, s.Query("INSERT INTO usertable (y_id, field0, field1, field2, field3) VALUES (?, ?, ?, ?, ?)",
			key, "f0-"+key, "f1", "f2", "f3").Exec())
		reps := c.ReplicasFor("ycsb", []byte(key))
		require.Len(t, reps, 3)
		for _, ip := range reps {
			before := c.Node(ip).Stats().Served
			on := sessionOn(t, c, "ycsb", ip)
			row := map[string]any{}
			require.NoError(t, on.Query("SELECT * FROM usertable WHERE y_id = ?", key).MapScan(row))
			assert.Equal(t, map[string]any{"y_id": key, "field0": "f0-" + key, "field1": "f1", "field2": "f2", "field3": "f3"}, row)
			assert.Equal(t, before+1, c.Node(ip).Stats().Served, "served by %s", ip)
			on.Close()
		}
	}
}

func TestUpdateDeleteAndUnpreparedLiterals(t *testing.T) {
	c := startCluster(t, Config{Nodes: 3, Model: ServiceModel{ZeroService: true}})
	createYCSB(t, c, "ks1", "{'class':'SimpleStrategy','replication_factor':1}", 2)
	s := newSession(t, c, "ks1", true)
	// literal statements are sent as QUERY (not prepared) when they have no values
	require.NoError(t, s.Query("INSERT INTO usertable (y_id, field0, field1) VALUES ('k''1', 'a', 'b')").Exec())
	var f0, f1 string
	require.NoError(t, s.Query("SELECT field0, field1 FROM ks1.usertable WHERE y_id = 'k''1'").Scan(&f0, &f1))
	assert.Equal(t, []string{"a", "b"}, []string{f0, f1})

	require.NoError(t, s.Query("UPDATE usertable SET field1 = ? WHERE y_id = ?", "B", "k'1").Exec())
	require.NoError(t, s.Query("SELECT field0, field1 FROM usertable WHERE y_id = ?", "k'1").Scan(&f0, &f1))
	assert.Equal(t, []string{"a", "B"}, []string{f0, f1})

	// UPDATE creates a row (upsert)
	require.NoError(t, s.Query("UPDATE usertable SET field0 = 'x' WHERE y_id = 'new'").Exec())
	require.NoError(t, s.Query("SELECT field0 FROM usertable WHERE y_id = 'new'").Scan(&f0))
	assert.Equal(t, "x", f0)

	// DELETE of a column, then of the row
	require.NoError(t, s.Query("DELETE field0 FROM usertable WHERE y_id = ?", "k'1").Exec())
	var p0 *string
	require.NoError(t, s.Query("SELECT field0 FROM usertable WHERE y_id = ?", "k'1").Scan(&p0))
	assert.Nil(t, p0)
	require.NoError(t, s.Query("DELETE FROM usertable WHERE y_id = ?", "k'1").Exec())
	err := s.Query("SELECT field0 FROM usertable WHERE y_id = ?", "k'1").Scan(&f0)
	assert.ErrorIs(t, err, gocql.ErrNotFound)
}

func TestTokenRangeScan(t *testing.T) {
	c := startCluster(t, Config{Nodes: 4, VNodes: 4, Seed: 11, Model: ServiceModel{ZeroService: true}})
	createYCSB(t, c, "ycsb", "{'class':'SimpleStrategy','replication_factor':2}", 1)
	s := newSession(t, c, "ycsb", true)
	type kt struct {
		key string
		tok int64
	}
	var all []kt
	for i := 0; i < 200; i++ {
		k := fmt.Sprintf("user%d", i)
		all = append(all, kt{k, Murmur3Token([]byte(k))})
		require.NoError(t, s.Query("INSERT INTO usertable (y_id, field0) VALUES (?, ?)", k, "v"+k).Exec())
	}
	sort.Slice(all, func(i, j int) bool { return all[i].tok < all[j].tok })
	start := all[50]
	iter := s.Query("SELECT y_id, field0 FROM usertable WHERE token(y_id) >= token(?) LIMIT ?", start.key, 10).Iter()
	var got []string
	var k, f string
	for iter.Scan(&k, &f) {
		got = append(got, k)
		assert.Equal(t, "v"+k, f)
	}
	require.NoError(t, iter.Close())
	var want []string
	for _, x := range all[50:60] {
		want = append(want, x.key)
	}
	assert.Equal(t, want, got, "scan returns the next keys in token order, across all nodes, without duplicates")

	// count(*) over the table sees each row once though RF=2
	var n int64
	require.NoError(t, s.Query("SELECT count(*) FROM usertable").Scan(&n))
	assert.EqualValues(t, 200, n)
}

func TestBadStatementsGetCQLErrors(t *testing.T) {
	c := startCluster(t, Config{Nodes: 3, Model: ServiceModel{ZeroService: true}})
	createYCSB(t, c, "ycsb", "{'class':'SimpleStrategy','replication_factor':1}", 1)
	s := newSession(t, c, "ycsb", false)
	cases := []struct {
		q    string
		code int
	}{
		{"SELEKT * FROM usertable", gocql.ErrCodeSyntax},
		{"SELECT * FROM usertable WHERE", gocql.ErrCodeSyntax},
		{"SELECT * FROM nosuchtable WHERE y_id = 'a'", gocql.ErrCodeInvalid},
		{"SELECT nosuchcol FROM usertable WHERE y_id = 'a'", gocql.ErrCodeInvalid},
		{"SELECT * FROM usertable WHERE field0 = 'a'", gocql.ErrCodeInvalid},
		{"INSERT INTO usertable (field0) VALUES ('a')", gocql.ErrCodeInvalid},
		{"CREATE KEYSPACE ycsb WITH replication = {'class':'SimpleStrategy','replication_factor':1}", gocql.ErrCodeAlreadyExists},
		{"CREATE KEYSPACE bad WITH replication = {'class':'NoSuchStrategy'}", gocql.ErrCodeConfig},
		{"BEGIN BATCH INSERT INTO usertable (y_id) VALUES ('a'); APPLY BATCH", gocql.ErrCodeSyntax},
		{"INSERT INTO usertable (y_id) VALUES (42)", gocql.ErrCodeInvalid},
	}
	for _, tc := range cases {
		err := s.Query(tc.q).Exec()
		require.Error(t, err, tc.q)
		var re gocql.RequestError
		require.True(t, errors.As(err, &re), "%q: %T %v", tc.q, err, err)
		assert.Equal(t, tc.code, re.Code(), "%q: %v", tc.q, err)
	}
	// the connection still works afterwards
	require.NoError(t, s.Query("INSERT INTO usertable (y_id, field0) VALUES ('a', 'b')").Exec())
	// prepared statement with a wrong number of values is rejected client side or server side, never hangs
	assert.Error(t, s.Query("SELECT * FROM usertable WHERE y_id = ?").Exec())
}
