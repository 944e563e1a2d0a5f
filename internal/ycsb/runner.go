package ycsb

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Phase is YCSB's load (-load: insert the records) or run (-t: the
// transaction mix) phase.
type Phase uint8

// Phases.
const (
	PhaseLoad Phase = iota
	PhaseRun
)

func (p Phase) String() string {
	if p == PhaseLoad {
		return "load"
	}
	return "run"
}

// RunOptions control one phase. Zero values take the workload's settings.
type RunOptions struct {
	Phase Phase
	// Threads is the number of concurrent workers (threadcount); default
	// the workload's, at least 1.
	Threads int
	// Target is the total rate in operations per second over all threads
	// (target); 0 = the workload's, which defaults to unthrottled; negative
	// = unthrottled whatever the workload says. With a
	// target, operation k is intended to start at start + k/Target and its
	// latency is also measured from that instant.
	Target float64
	// Operations to perform: 0 = the workload's (insertcount for load,
	// operationcount for run, where operationcount 0 means unbounded);
	// negative = unbounded (until MaxExecutionTime or ctx ends).
	Operations int64
	// MaxExecutionTime stops issuing operations after this long
	// (maxexecutiontime); 0 = the workload's, which defaults to no limit.
	MaxExecutionTime time.Duration
	// Seed makes key and operation choices repeatable; worker i uses a
	// stream derived from (Seed, i).
	Seed int64
	// Measurements receives the latencies; nil = a fresh one.
	Measurements *Measurements
	// Progress, when set, is called every ProgressInterval (default 1 s)
	// from a separate goroutine while the phase runs.
	Progress         func(done int64, elapsed time.Duration)
	ProgressInterval time.Duration
}

// Result is what a phase did.
type Result struct {
	Phase       Phase         `json:"phase"`
	Start       time.Time     `json:"start"`
	Elapsed     time.Duration `json:"elapsed_ns"`
	Operations  int64         `json:"operations"` // completed top-level operations
	Throughput  float64       `json:"throughput_ops_per_sec"`
	Target      float64       `json:"target_ops_per_sec,omitempty"`
	Threads     int           `json:"threads"`
	Interrupted bool          `json:"interrupted,omitempty"` // stopped by ctx before all operations were done
	TimedOut    bool          `json:"timed_out,omitempty"`   // stopped by MaxExecutionTime
	Summary     Summary       `json:"summary"`
}

// Runner drives one phase of a workload against a DB (YCSB's Client and
// ClientThreads).
type Runner struct {
	w    *Workload
	db   DB
	opts RunOptions
	m    *Measurements

	total   int64 // operations to do, <0 = unbounded
	tickets atomic.Int64
	done    atomic.Int64
}

// NewRunner validates opts and prepares a phase.
func NewRunner(w *Workload, db DB, opts RunOptions) (*Runner, error) {
	cfg := w.Config()
	if opts.Threads == 0 {
		opts.Threads = cfg.Threads
	}
	if opts.Threads < 1 || opts.Threads > 10000 {
		return nil, fmt.Errorf("ycsb: threads %d out of range; allowed: 1..10000", opts.Threads)
	}
	if opts.Target == 0 {
		opts.Target = cfg.Target
	}
	if math.IsNaN(opts.Target) || math.IsInf(opts.Target, 0) {
		return nil, fmt.Errorf("ycsb: target %v ops/s out of range; allowed: a finite number (<= 0 = unthrottled)", opts.Target)
	}
	if opts.Target < 0 {
		opts.Target = 0
	}
	if opts.MaxExecutionTime == 0 {
		opts.MaxExecutionTime = cfg.MaxExecutionTime
	}
	if opts.MaxExecutionTime < 0 {
		return nil, fmt.Errorf("ycsb: max execution time %v out of range; allowed: >= 0", opts.MaxExecutionTime)
	}
	if opts.ProgressInterval <= 0 {
		opts.ProgressInterval = time.Second
	}
	total := opts.Operations
	if total == 0 {
		if opts.Phase == PhaseLoad {
			total = cfg.InsertCount
		} else if total = cfg.OperationCount; total == 0 {
			total = -1
		}
	}
	if opts.Phase == PhaseLoad && total > cfg.InsertCount {
		return nil, fmt.Errorf("ycsb: load of %d records exceeds insertcount %d", total, cfg.InsertCount)
	}
	m := opts.Measurements
	if m == nil {
		shards := opts.Threads
		if shards > 16 {
			shards = 16
		}
		m = NewMeasurements(shards, opts.Target > 0)
	}
	return &Runner{w: w, db: db, opts: opts, m: m, total: total}, nil
}

// Done is the number of operations completed so far.
func (r *Runner) Done() int64 { return r.done.Load() }

// Total is the number of operations the phase will do (<0 = unbounded).
func (r *Runner) Total() int64 { return r.total }

// Measurements are where latencies go.
func (r *Runner) Measurements() *Measurements { return r.m }

// Run performs the phase. It returns when every operation is done, when
// MaxExecutionTime passes, or when ctx is cancelled (in-flight operations
// then end with ctx's error and are not counted); the Result always holds
// what was measured.
func (r *Runner) Run(ctx context.Context) (Result, error) {
	stop := ctx
	if r.opts.MaxExecutionTime > 0 {
		var cancel context.CancelFunc
		stop, cancel = context.WithTimeout(ctx, r.opts.MaxExecutionTime)
		defer cancel()
	}
	start := time.Now()
	var tick time.Duration
	if r.opts.Target > 0 {
		tick = time.Duration(float64(time.Second) / r.opts.Target)
		if tick <= 0 {
			tick = 1
		}
	}
	var wg sync.WaitGroup
	errc := make(chan error, 1)
	for i := 0; i < r.opts.Threads; i++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			if err := r.worker(ctx, stop, id, start, tick); err != nil {
				select {
				case errc <- err:
				default:
				}
			}
		}(i)
	}
	progressDone := make(chan struct{})
	var pwg sync.WaitGroup
	if r.opts.Progress != nil {
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			t := time.NewTicker(r.opts.ProgressInterval)
			defer t.Stop()
			for {
				select {
				case <-progressDone:
					return
				case <-t.C:
					r.opts.Progress(r.done.Load(), time.Since(start))
				}
			}
		}()
	}
	wg.Wait()
	close(progressDone)
	pwg.Wait()
	elapsed := time.Since(start)
	n := r.done.Load()
	res := Result{
		Phase: r.opts.Phase, Start: start, Elapsed: elapsed, Operations: n,
		Target: r.opts.Target, Threads: r.opts.Threads, Summary: r.m.Summary(),
	}
	if elapsed > 0 {
		res.Throughput = float64(n) / elapsed.Seconds()
	}
	if r.total < 0 || n < r.total {
		res.Interrupted = ctx.Err() != nil
		res.TimedOut = !res.Interrupted && stop.Err() != nil
	}
	select {
	case err := <-errc:
		return res, err
	default:
	}
	return res, nil
}

func (r *Runner) worker(ctx, stop context.Context, id int, start time.Time, tick time.Duration) error {
	t := r.w.NewThread(r.opts.Seed, id)
	var timer *time.Timer
	if tick > 0 {
		timer = time.NewTimer(time.Hour)
		defer timer.Stop()
	}
	for stop.Err() == nil {
		k := r.tickets.Add(1) - 1
		if r.total >= 0 && k >= r.total {
			return nil
		}
		var intended time.Time
		if tick > 0 {
			intended = start.Add(time.Duration(k) * tick)
			if d := time.Until(intended); d > 0 {
				timer.Reset(d)
				select {
				case <-timer.C:
				case <-stop.Done():
					return nil
				}
			}
		}
		var err error
		if r.opts.Phase == PhaseLoad {
			err = r.doInsert(ctx, t, id, r.w.cfg.InsertStart+k, intended, false)
		} else {
			err = r.doTransaction(ctx, t, id, intended)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// finish records one call unless it failed only because ctx was cancelled.
func (r *Runner) finish(ctx context.Context, id int, op OpType, top bool, begin, intended time.Time, err error) bool {
	if err != nil && ctx.Err() != nil {
		return false
	}
	end := time.Now()
	if intended.IsZero() {
		intended = begin
	}
	if top {
		r.m.RecordOp(id, op, end.Sub(begin), end.Sub(intended), err)
		r.done.Add(1)
	} else {
		r.m.RecordCall(id, op, end.Sub(begin), end.Sub(intended), err)
	}
	return true
}

func (r *Runner) doInsert(ctx context.Context, t *Thread, id int, keynum int64, intended time.Time, ack bool) error {
	key := r.w.KeyName(keynum)
	values := t.AllValues()
	begin := time.Now()
	err := r.db.Insert(ctx, r.w.cfg.Table, key, values)
	r.finish(ctx, id, OpInsert, true, begin, intended, err)
	if ack {
		return r.w.inserts.Acknowledge(keynum)
	}
	return nil
}

func (r *Runner) doTransaction(ctx context.Context, t *Thread, id int, intended time.Time) error {
	w, table := r.w, r.w.cfg.Table
	op := w.NextOp(t.R)
	switch op {
	case OpInsert:
		return r.doInsert(ctx, t, id, w.inserts.Next(), intended, true)
	case OpRead:
		key := w.KeyName(w.NextKeynum(t.R))
		fields := t.ReadFields()
		begin := time.Now()
		err := r.db.Read(ctx, table, key, fields)
		r.finish(ctx, id, op, true, begin, intended, err)
	case OpUpdate:
		key := w.KeyName(w.NextKeynum(t.R))
		values := t.UpdateValues()
		begin := time.Now()
		err := r.db.Update(ctx, table, key, values)
		r.finish(ctx, id, op, true, begin, intended, err)
	case OpScan:
		key := w.KeyName(w.NextKeynum(t.R))
		n := t.ScanLength()
		fields := t.ReadFields()
		begin := time.Now()
		err := r.db.Scan(ctx, table, key, n, fields)
		r.finish(ctx, id, op, true, begin, intended, err)
	case OpReadModifyWrite:
		key := w.KeyName(w.NextKeynum(t.R))
		fields := t.ReadFields()
		values := t.UpdateValues()
		begin := time.Now()
		if intended.IsZero() {
			intended = begin
		}
		err := r.db.Read(ctx, table, key, fields)
		r.finish(ctx, id, OpRead, false, begin, intended, err)
		if err == nil {
			ub := time.Now()
			err = r.db.Update(ctx, table, key, values)
			r.finish(ctx, id, OpUpdate, false, ub, intended, err)
		}
		r.finish(ctx, id, op, true, begin, intended, err)
	}
	return nil
}

// Run is a convenience: NewRunner then Run.
func Run(ctx context.Context, w *Workload, db DB, opts RunOptions) (Result, error) {
	r, err := NewRunner(w, db, opts)
	if err != nil {
		return Result{}, err
	}
	return r.Run(ctx)
}
