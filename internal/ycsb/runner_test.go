package ycsb

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// memDB is an in-memory DB that can stall every call while paused.
type memDB struct {
	mu       sync.Mutex
	rows     map[string]map[string]string
	calls    [numOps]atomic.Int64
	pausedMu sync.RWMutex // held for writing during a pause
	failKey  string
}

func newMemDB() *memDB { return &memDB{rows: map[string]map[string]string{}} }

func (d *memDB) wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { d.pausedMu.RLock(); d.pausedMu.RUnlock(); close(done) }() //nolint
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// pause stalls every call for d.
func (d *memDB) pause(p time.Duration) {
	d.pausedMu.Lock()
	time.AfterFunc(p, d.pausedMu.Unlock)
}

func (d *memDB) Read(ctx context.Context, table, key string, fields []string) error {
	d.calls[OpRead].Add(1)
	if err := d.wait(ctx); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.rows[key]; !ok {
		return errors.New("not found: " + key)
	}
	return nil
}

func (d *memDB) write(ctx context.Context, op OpType, key string, values []Field) error {
	d.calls[op].Add(1)
	if err := d.wait(ctx); err != nil {
		return err
	}
	if key == d.failKey {
		return errors.New("injected failure")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	r := d.rows[key]
	if r == nil {
		r = map[string]string{}
		d.rows[key] = r
	}
	for _, v := range values {
		r[v.Name] = v.Value
	}
	return nil
}

func (d *memDB) Update(ctx context.Context, table, key string, values []Field) error {
	return d.write(ctx, OpUpdate, key, values)
}
func (d *memDB) Insert(ctx context.Context, table, key string, values []Field) error {
	return d.write(ctx, OpInsert, key, values)
}
func (d *memDB) Scan(ctx context.Context, table, start string, n int, fields []string) error {
	d.calls[OpScan].Add(1)
	return d.wait(ctx)
}

func mustWorkload(t *testing.T, p Properties) *Workload {
	t.Helper()
	c, err := ParseConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWorkload(c)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestLoadThenRun(t *testing.T) {
	for _, name := range BuiltinWorkloads() {
		p, _ := BuiltinProperties(name)
		p = p.Merge(Properties{"recordcount": "200", "operationcount": "2000", "threadcount": "4"})
		w := mustWorkload(t, p)
		db := newMemDB()
		res, err := Run(context.Background(), w, db, RunOptions{Phase: PhaseLoad, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if res.Operations != 200 || len(db.rows) != 200 {
			t.Fatalf("%s load: %d ops, %d rows, want 200", name, res.Operations, len(db.rows))
		}
		for i := int64(0); i < 200; i++ {
			if _, ok := db.rows[w.KeyName(i)]; !ok {
				t.Fatalf("%s: record %d (%s) not loaded", name, i, w.KeyName(i))
			}
		}
		res, err = Run(context.Background(), w, db, RunOptions{Phase: PhaseRun, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if res.Operations != 2000 || res.Interrupted || res.TimedOut {
			t.Fatalf("%s run: %+v", name, res)
		}
		var total int64
		for _, o := range res.Summary.Ops {
			if o.Latency.Errors != 0 {
				t.Errorf("%s: %s had %d errors (read of a key not loaded?)", name, o.Op, o.Latency.Errors)
			}
			total += o.Latency.Operations
		}
		if name != "f" && total != 2000 {
			t.Errorf("%s: per-op counts sum to %d", name, total)
		}
		if res.Summary.All.Latency.Operations != 2000 {
			t.Errorf("%s: combined count %d", name, res.Summary.All.Latency.Operations)
		}
		if name == "f" {
			// read-modify-write records its inner read and update too, as YCSB does.
			var rmw, upd int64
			for _, o := range res.Summary.Ops {
				switch o.Op {
				case "READ-MODIFY-WRITE":
					rmw = o.Latency.Operations
				case "UPDATE":
					upd = o.Latency.Operations
				}
			}
			if rmw == 0 || upd != rmw {
				t.Errorf("f: rmw %d, inner updates %d", rmw, upd)
			}
		}
		if name == "d" || name == "e" {
			if len(db.rows) <= 200 {
				t.Errorf("%s: inserts in run phase did not add rows (%d)", name, len(db.rows))
			}
		}
	}
}

func TestRunnerErrorsCountedAndSummaryLines(t *testing.T) {
	w := mustWorkload(t, Properties{"recordcount": "10", "operationcount": "100", "readproportion": "0", "updateproportion": "1"})
	db := newMemDB()
	db.failKey = w.KeyName(3)
	if _, err := Run(context.Background(), w, db, RunOptions{Phase: PhaseLoad}); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), w, db, RunOptions{Phase: PhaseRun, Seed: 3, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	upd := res.Summary.Ops[0]
	if upd.Op != "UPDATE" || upd.Latency.Errors == 0 || upd.Latency.Operations != 100 {
		t.Fatalf("update stats %+v", upd)
	}
	var buf bytes.Buffer
	if err := WriteSummary(&buf, res.Elapsed, res.Operations, res.Summary); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, s := range []string{"[OVERALL], RunTime(ms), ", "[OVERALL], Throughput(ops/sec), ", "[UPDATE], Operations, 100",
		"[UPDATE], 99thPercentileLatency(us), ", "[UPDATE], Return=ERROR, "} {
		if !strings.Contains(out, s) {
			t.Errorf("summary lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "Intended-") {
		t.Errorf("intended lines without a target:\n%s", out)
	}
}

// A stalled server must show up in intended-time latencies: with a target
// rate, operations scheduled during a pause wait, and that wait is measured.
func TestIntendedLatencyIncludesQueueing(t *testing.T) {
	w := mustWorkload(t, Properties{"recordcount": "50", "readproportion": "1", "updateproportion": "0"})
	db := newMemDB()
	if _, err := Run(context.Background(), w, db, RunOptions{Phase: PhaseLoad}); err != nil {
		t.Fatal(err)
	}
	const pause = 400 * time.Millisecond
	var once sync.Once
	r, err := NewRunner(w, db, RunOptions{Phase: PhaseRun, Threads: 4, Target: 400, Operations: 600, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if r.Done() >= 120 {
				once.Do(func() { db.pause(pause) })
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	res, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Operations != 600 {
		t.Fatalf("ops %d", res.Operations)
	}
	m := r.Measurements()
	actual, intended := m.Histogram(OpRead, false), m.Histogram(OpRead, true)
	const slow = 100_000 // µs
	countAbove := func(h *hdrhistogram.Histogram) int64 {
		var n int64
		for _, b := range h.Distribution() {
			if b.From > slow {
				n += b.Count
			}
		}
		return n
	}
	// About 160 operations were scheduled during the 400 ms pause, but only
	// the 4 in flight saw the stall themselves.
	ia, ii := countAbove(actual), countAbove(intended)
	t.Logf("operations above 100ms: actual %d, intended %d; max actual %dus intended %dus", ia, ii, actual.Max(), intended.Max())
	if intended.Max() < int64(pause/time.Microsecond)*3/4 {
		t.Errorf("intended max %dus, want >= %dus", intended.Max(), int64(pause/time.Microsecond)*3/4)
	}
	if ia > 20 || ii < 60 || ii < 4*ia {
		t.Errorf("intended latencies do not show the queueing: %d operations above 100ms vs %d actual", ii, ia)
	}
	if res.Summary.All.Intended == nil || res.Summary.All.Intended.P99Us < res.Summary.All.Latency.P99Us {
		t.Errorf("summary intended p99 missing or below actual: %+v", res.Summary.All)
	}
	var buf bytes.Buffer
	_ = WriteSummary(&buf, res.Elapsed, res.Operations, res.Summary)
	if !strings.Contains(buf.String(), "[Intended-READ], 99thPercentileLatency(us), ") {
		t.Errorf("no intended lines:\n%s", buf.String())
	}
}

func TestRunnerStopsOnCancelAndTimeout(t *testing.T) {
	w := mustWorkload(t, Properties{"recordcount": "20", "operationcount": "0"})
	db := newMemDB()
	if _, err := Run(context.Background(), w, db, RunOptions{Phase: PhaseLoad}); err != nil {
		t.Fatal(err)
	}
	// Unbounded run, cancelled while every call is stalled: returns promptly,
	// marks the result interrupted, and does not count the aborted calls.
	ctx, cancel := context.WithCancel(context.Background())
	r, _ := NewRunner(w, db, RunOptions{Phase: PhaseRun, Threads: 3, Target: 1000})
	go func() {
		for r.Done() < 50 {
			time.Sleep(time.Millisecond)
		}
		db.pause(5 * time.Second)
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	start := time.Now()
	res, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 4*time.Second {
		t.Fatalf("cancel took %v", time.Since(start))
	}
	if !res.Interrupted || res.Operations < 50 || res.Summary.All.Latency.Errors != 0 {
		t.Fatalf("result %+v", res)
	}
	// Max execution time.
	res, err = Run(context.Background(), w, newMemDBWith(db), RunOptions{Phase: PhaseRun, Threads: 2, Target: 200, MaxExecutionTime: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Interrupted || res.Operations < 10 || res.Operations > 100 {
		t.Fatalf("timed run: %+v", res)
	}
	if _, err := NewRunner(w, db, RunOptions{Threads: -1}); err == nil || !strings.Contains(err.Error(), "threads") {
		t.Fatalf("bad threads: %v", err)
	}
	if _, err := NewRunner(w, db, RunOptions{Target: math.NaN()}); err == nil || !strings.Contains(err.Error(), "target") {
		t.Fatalf("bad target: %v", err)
	}
}

func newMemDBWith(old *memDB) *memDB {
	d := newMemDB()
	old.mu.Lock()
	for k, v := range old.rows {
		d.rows[k] = v
	}
	old.mu.Unlock()
	return d
}

func TestSeries(t *testing.T) {
	// An operation goes to the interval the time since the series' start
	// falls in. With one-hour intervals, moving the start back stands in
	// for the time passing between the two operations, whatever the
	// scheduler does between two lines.
	m := NewMeasurements(2, false)
	m.EnableSeries(time.Now(), time.Hour)
	m.RecordOp(0, OpRead, time.Millisecond, time.Millisecond, nil)
	m.EnableSeries(time.Now().Add(-150*time.Minute), time.Hour) // 2.5 intervals later
	m.RecordOp(1, OpRead, 5*time.Millisecond, 5*time.Millisecond, nil)
	s := m.Series()
	if len(s) != 3 || s[0].Operations != 1 || s[1].Operations != 0 || s[2].Operations != 1 || s[2].P50Us < 4900 || s[2].Offset != 2*time.Hour {
		t.Fatalf("series %+v", s)
	}
}

func TestNegativeTargetUnthrottles(t *testing.T) {
	w := mustWorkload(t, Properties{"recordcount": "500", "target": "10"})
	db := newMemDB()
	start := time.Now()
	res, err := Run(context.Background(), w, db, RunOptions{Phase: PhaseLoad, Target: -1, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	// At the workload's 10 ops/s this would take 50 s.
	if res.Operations != 500 || res.Target != 0 || time.Since(start) > 10*time.Second {
		t.Fatalf("load %+v took %v", res, time.Since(start))
	}
	if res.Summary.All.Intended != nil {
		t.Fatalf("intended latencies recorded without a target")
	}
}

func BenchmarkRecordOp(b *testing.B) {
	m := NewMeasurements(4, true)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m.RecordOp(i, OpRead, time.Duration(i%5000)*time.Microsecond, time.Duration(i%7000)*time.Microsecond, nil)
	}
}
