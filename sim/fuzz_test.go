package sim

import (
	"testing"
)

// FuzzParseAndPlan checks that no statement text makes the parser or the
// planner panic (the seed corpus runs with every `go test`).
func FuzzParseAndPlan(f *testing.F) {
	for _, s := range []string{
		"SELECT * FROM usertable WHERE y_id = ?",
		"SELECT field0 FROM ycsb.usertable WHERE token(y_id) >= token(?) LIMIT ?",
		"INSERT INTO usertable (y_id, field0) VALUES ('a', 'b')",
		"UPDATE usertable SET field0 = ? WHERE y_id = ?",
		"DELETE field0 FROM usertable WHERE y_id = 'x'",
		"CREATE KEYSPACE k WITH replication = {'class':'SimpleStrategy','replication_factor':1}",
		"CREATE TABLE t (a text PRIMARY KEY, b int)",
		"SELECT count(*) FROM system_schema.tables WHERE keyspace_name = ?",
		"USE \"Ks\"", "DROP TABLE IF EXISTS t", "TRUNCATE t", "select token(", "'", "\"", "0x", "-",
	} {
		f.Add(s)
	}
	c := newCluster("fuzz", false)
	c.members = []*member{{idx: 0, ip: "127.0.0.1", dc: "dc1", rack: "rack1", tokens: []int64{0}}}
	c.finishSetup()
	for _, q := range []string{
		"CREATE KEYSPACE ycsb WITH replication = {'class':'SimpleStrategy','replication_factor':1}",
		"CREATE TABLE ycsb.usertable (y_id text PRIMARY KEY, field0 text, n int)",
	} {
		st, err := parseStatement(q)
		if err != nil {
			f.Fatal(err)
		}
		if _, _, _, err := c.schema.applyDDL(st, ""); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, q string) {
		st, err := parseStatement(q)
		if err != nil {
			return
		}
		_, _ = c.makePlan(st, q, "ycsb")
	})
}
