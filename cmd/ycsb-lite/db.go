package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute/internal/ycsb"
)

// cqlDB is ycsb.DB over a gocql session (the YCSB cassandra-cql binding):
// table (y_id text PRIMARY KEY, field0..fieldN text).
type cqlDB struct {
	s       *gocql.Session
	cl      gocql.Consistency
	ks      string
	fields  []string
	readAll string
	readOne map[string]string // field -> SELECT field
	setOne  map[string]string // field -> UPDATE SET field
	setAll  string
	insert  string
	scanAll string
	scanOne map[string]string
	// feedback, when set, sees every result before it is closed (server
	// feedback in the custom payload, for policies that use it).
	feedback func(*gocql.Iter) bool
	// run, when set, executes a statement instead of the gocql v1 session
	// (the v2 driver, driver_v2.go).
	run  func(ctx context.Context, stmt string, args []any) error
	errs errorKinds // failed operations by kind
}

func newCQLDB(s *gocql.Session, keyspace, table string, fields []string, cl gocql.Consistency) *cqlDB {
	t := keyspace + "." + table
	d := &cqlDB{s: s, cl: cl, ks: keyspace, fields: fields,
		readOne: map[string]string{}, setOne: map[string]string{}, scanOne: map[string]string{}}
	d.readAll = "SELECT * FROM " + t + " WHERE y_id = ?"
	d.scanAll = "SELECT * FROM " + t + " WHERE token(y_id) >= token(?) LIMIT ?"
	sets := make([]string, len(fields))
	marks := make([]string, len(fields))
	for i, f := range fields {
		d.readOne[f] = "SELECT " + f + " FROM " + t + " WHERE y_id = ?"
		d.scanOne[f] = "SELECT " + f + " FROM " + t + " WHERE token(y_id) >= token(?) LIMIT ?"
		d.setOne[f] = "UPDATE " + t + " SET " + f + " = ? WHERE y_id = ?"
		sets[i] = f + " = ?"
		marks[i] = "?"
	}
	d.setAll = "UPDATE " + t + " SET " + strings.Join(sets, ", ") + " WHERE y_id = ?"
	d.insert = "INSERT INTO " + t + " (y_id, " + strings.Join(fields, ", ") + ") VALUES (?, " + strings.Join(marks, ", ") + ")"
	return d
}

// exec runs one idempotent statement. args must not be reused after exec
// returns: with speculative execution gocql returns the first attempt's
// result while a losing attempt may still be marshalling args in its own
// goroutine (a pooled args slice raced there under -race).
func (d *cqlDB) exec(ctx context.Context, stmt string, args ...any) error {
	if d.run != nil {
		err := d.run(ctx, stmt, args)
		if err != nil {
			d.errs.add(err)
		}
		return err
	}
	q := d.s.Query(stmt, args...).WithContext(ctx).Consistency(d.cl).Idempotent(true)
	var err error
	if d.feedback == nil {
		err = q.Exec()
	} else {
		iter := q.Iter()
		d.feedback(iter)
		err = iter.Close()
	}
	if err != nil {
		d.errs.add(err)
	}
	return err
}

func (d *cqlDB) Read(ctx context.Context, table, key string, fields []string) error {
	stmt := d.readAll
	if len(fields) == 1 {
		stmt = d.readOne[fields[0]]
	}
	return d.exec(ctx, stmt, key)
}

func (d *cqlDB) Scan(ctx context.Context, table, start string, n int, fields []string) error {
	stmt := d.scanAll
	if len(fields) == 1 {
		stmt = d.scanOne[fields[0]]
	}
	return d.exec(ctx, stmt, start, n)
}

func (d *cqlDB) Update(ctx context.Context, table, key string, values []ycsb.Field) error {
	if len(values) == 1 {
		return d.exec(ctx, d.setOne[values[0].Name], values[0].Value, key)
	}
	if len(values) != len(d.fields) {
		return fmt.Errorf("update of %d fields; the binding writes one field or all %d", len(values), len(d.fields))
	}
	args := make([]any, 0, len(values)+1)
	for _, v := range values {
		args = append(args, v.Value)
	}
	args = append(args, key)
	return d.exec(ctx, d.setAll, args...)
}

func (d *cqlDB) Insert(ctx context.Context, table, key string, values []ycsb.Field) error {
	if len(values) != len(d.fields) {
		return fmt.Errorf("insert of %d fields, table has %d", len(values), len(d.fields))
	}
	args := make([]any, 0, len(values)+1)
	args = append(args, key)
	for _, v := range values {
		args = append(args, v.Value)
	}
	return d.exec(ctx, d.insert, args...)
}

// createSchema creates the keyspace (replication is the CQL map, see
// options.replication) and usertable, each if missing.
func createSchema(s *gocql.Session, keyspace, table, replication string, fields []string) error {
	if err := s.Query(fmt.Sprintf("CREATE KEYSPACE IF NOT EXISTS %s WITH replication = %s",
		keyspace, replication)).Exec(); err != nil {
		return fmt.Errorf("creating keyspace %s: %w", keyspace, err)
	}
	cols := make([]string, len(fields))
	for i, f := range fields {
		cols[i] = f + " text"
	}
	if err := s.Query(fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.%s (y_id text PRIMARY KEY, %s)",
		keyspace, table, strings.Join(cols, ", "))).Exec(); err != nil {
		return fmt.Errorf("creating table %s.%s: %w", keyspace, table, err)
	}
	return nil
}

// hostCounter counts attempts per host (the node the policy chose as
// coordinator); each driver's query observer (driver_v1.go, driver_v2.go)
// feeds it.
type hostCounter struct {
	mu     sync.RWMutex
	counts map[string]*atomic.Int64
	on     atomic.Bool
}

func newHostCounter() *hostCounter {
	return &hostCounter{counts: map[string]*atomic.Int64{}}
}

// count counts one attempt on the host at ip (while on).
func (h *hostCounter) count(ip string) {
	if !h.on.Load() {
		return
	}
	h.mu.RLock()
	c := h.counts[ip]
	h.mu.RUnlock()
	if c == nil {
		h.mu.Lock()
		if c = h.counts[ip]; c == nil {
			c = new(atomic.Int64)
			h.counts[ip] = c
		}
		h.mu.Unlock()
	}
	c.Add(1)
}

// snapshot returns the counts per host IP.
func (h *hostCounter) snapshot() map[string]int64 {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := make(map[string]int64, len(h.counts))
	for k, v := range h.counts {
		out[k] = v.Load()
	}
	return out
}
