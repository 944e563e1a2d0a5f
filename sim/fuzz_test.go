package sim

import (
	"errors"
	"reflect"
	"testing"
)

// FuzzParseAndPlan checks that no statement text makes the parser or the
// planner panic, and that parsing is deterministic. The seed corpus (the
// statement shapes drivers send and broken fragments) runs with every
// `go test`; fuzz longer with
//
//	go test -run '^$' -fuzz FuzzParseAndPlan -fuzztime 5m ./sim/
func FuzzParseAndPlan(f *testing.F) {
	seeds := []string{
		"SELECT * FROM usertable WHERE y_id = ?",
		"SELECT field0 FROM ycsb.usertable WHERE token(y_id) >= token(?) LIMIT ?",
		"INSERT INTO usertable (y_id, field0) VALUES ('a', 'b')",
		"UPDATE usertable SET field0 = ? WHERE y_id = ?",
		"DELETE field0 FROM usertable WHERE y_id = 'x'",
		"CREATE KEYSPACE k WITH replication = {'class':'SimpleStrategy','replication_factor':1}",
		"CREATE TABLE t (a text PRIMARY KEY, b int)",
		"SELECT count(*) FROM system_schema.tables WHERE keyspace_name = ?",
		"USE \"Ks\"", "DROP TABLE IF EXISTS t", "TRUNCATE t",
		// what gocql and the Python driver send on connect and for YCSB
		"SELECT * FROM system.local WHERE key='local'",
		"SELECT peer, data_center, rack, rpc_address, tokens, host_id FROM system.peers",
		"SELECT * FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?",
		"select schema_version from system.local where key='local'",
		"SELECT y_id, field0 FROM usertable WHERE token(y_id) > -9223372036854775808 AND token(y_id) <= ? LIMIT 100",
		"SELECT count(1) FROM usertable WHERE token(y_id) >= token('a') ALLOW FILTERING",
		"INSERT INTO ycsb.usertable (y_id, field0, n) VALUES (:k, :v, 3) USING TTL 60 AND TIMESTAMP 1",
		"UPDATE usertable USING TTL ? SET field0 = null, n = -12 WHERE y_id = 'it''s'",
		"DELETE FROM usertable WHERE y_id = ? IF EXISTS",
		"CREATE KEYSPACE IF NOT EXISTS k WITH replication = {'class':'NetworkTopologyStrategy','dc1':3} AND durable_writes = false",
		"CREATE TABLE IF NOT EXISTS k.t (a text, b int, c map<text, frozen<list<int>>>, PRIMARY KEY ((a), b)) WITH comment = 'x' AND compaction = {'class': 'LCS'};",
		"-- comment\nSELECT * FROM \"UserTable\" // trailing",
		"SELECT * FROM usertable WHERE y_id = 0xcafe",
	}
	broken := []string{"select token(", "'", "\"", "0x", "-", "SELECT 1.5e3 FROM t",
		"select * from t where token(a) = token(?)", "SELECT * FROM t WHERE a IN (1, 2)", "INSERT INTO t (a, b) VALUES (1)"}
	for _, s := range append(append([]string(nil), seeds...), broken...) {
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
	// the well-formed seeds must get past the parser, so that the corpus
	// reaches the planner and not only the error paths
	for _, q := range seeds {
		if _, err := parseStatement(q); err != nil {
			f.Fatalf("seed %q: %v", q, err)
		}
	}
	for _, q := range broken {
		if _, err := parseStatement(q); err == nil {
			f.Fatalf("broken seed %q parses", q)
		}
	}
	f.Fuzz(func(t *testing.T, q string) {
		st, err := parseStatement(q)
		if err != nil {
			var se *syntaxErr
			if !errors.As(err, &se) {
				t.Fatalf("parse error of type %T: %v", err, err)
			}
			return
		}
		again, err := parseStatement(q)
		if err != nil || !reflect.DeepEqual(st, again) {
			t.Fatalf("parsing %q twice gave different results", q)
		}
		_, _ = c.makePlan(st, q, "ycsb")
	})
}
