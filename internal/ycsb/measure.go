package ycsb

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram bounds: latencies are recorded in microseconds (YCSB's unit)
// from 1 µs to 10 minutes with 3 significant digits; longer values are
// clamped to the maximum.
const (
	histMinUs  = 1
	histMaxUs  = int64(10 * time.Minute / time.Microsecond)
	histDigits = 3
)

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(histMinUs, histMaxUs, histDigits) }

func toUs(d time.Duration) int64 {
	us := int64(d / time.Microsecond)
	if us < histMinUs {
		return histMinUs
	}
	if us > histMaxUs {
		return histMaxUs
	}
	return us
}

// opHists are one operation type's histograms in one shard.
type opHists struct {
	actual, intended *hdrhistogram.Histogram
	ok, errs         int64
}

type shard struct {
	mu  sync.Mutex
	ops [numOps + 1]*opHists // last slot: all top-level operations
	_   [64]byte             // keep shards on separate cache lines
}

const allSlot = int(numOps)

// Measurements collects latencies per operation type in HDR histograms
// (YCSB's HdrHistogram measurement): the service latency measured from the
// real start of the call and, when a target rate is set, the latency from
// the operation's intended start time. Recording is sharded by thread so
// workers rarely share a lock.
type Measurements struct {
	shards   []shard
	intended bool

	interval atomic.Int64 // series interval in ns; 0 = off
	seriesMu sync.Mutex
	start    time.Time
	series   []*hdrhistogram.Histogram
}

// NewMeasurements returns empty measurements with the given number of
// shards (>= 1; use the thread count or fewer). intended enables the
// intended-start-time histograms.
func NewMeasurements(shards int, intended bool) *Measurements {
	if shards < 1 {
		shards = 1
	}
	return &Measurements{shards: make([]shard, shards), intended: intended}
}

// EnableSeries additionally records, per interval since start, a coarse
// (2-digit) histogram of the latency of every top-level operation
// (intended latency when enabled), for latency-over-time plots.
func (m *Measurements) EnableSeries(start time.Time, interval time.Duration) {
	m.seriesMu.Lock()
	m.start = start
	m.seriesMu.Unlock()
	m.interval.Store(int64(interval))
}

// Intended reports whether intended-time latencies are recorded.
func (m *Measurements) Intended() bool { return m.intended }

func (m *Measurements) record(shardID int, op OpType, top bool, actual, intended time.Duration, err error) {
	s := &m.shards[shardID%len(m.shards)]
	a, in := toUs(actual), toUs(intended)
	s.mu.Lock()
	m.recordSlot(s, int(op), a, in, err)
	if top {
		m.recordSlot(s, allSlot, a, in, err)
	}
	s.mu.Unlock()
	if iv := time.Duration(m.interval.Load()); top && iv > 0 {
		v := a
		if m.intended {
			v = in
		}
		m.seriesMu.Lock()
		i := int(time.Since(m.start) / iv)
		if i >= 0 {
			for len(m.series) <= i {
				m.series = append(m.series, nil)
			}
			if m.series[i] == nil {
				m.series[i] = hdrhistogram.New(histMinUs, histMaxUs, 2)
			}
			_ = m.series[i].RecordValue(v)
		}
		m.seriesMu.Unlock()
	}
}

func (m *Measurements) recordSlot(s *shard, slot int, a, in int64, err error) {
	h := s.ops[slot]
	if h == nil {
		h = &opHists{actual: newHist()}
		if m.intended {
			h.intended = newHist()
		}
		s.ops[slot] = h
	}
	if err != nil {
		h.errs++
	} else {
		h.ok++
	}
	_ = h.actual.RecordValue(a)
	if h.intended != nil {
		_ = h.intended.RecordValue(in)
	}
}

// RecordOp records one top-level operation (counted in its type and in the
// combined "all operations" histogram).
func (m *Measurements) RecordOp(shardID int, op OpType, actual, intended time.Duration, err error) {
	m.record(shardID, op, true, actual, intended, err)
}

// RecordCall records a database call made inside another operation (the
// read and the update of a read-modify-write), in its own type only, as
// YCSB's DBWrapper does.
func (m *Measurements) RecordCall(shardID int, op OpType, actual, intended time.Duration, err error) {
	m.record(shardID, op, false, actual, intended, err)
}

// merged returns a merged copy of slot's histogram and counts over all shards.
func (m *Measurements) merged(slot int, intended bool) (*hdrhistogram.Histogram, int64, int64) {
	out := newHist()
	var ok, errs int64
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		if h := s.ops[slot]; h != nil {
			src := h.actual
			if intended && h.intended != nil {
				src = h.intended
			}
			out.Merge(src)
			ok += h.ok
			errs += h.errs
		}
		s.mu.Unlock()
	}
	return out, ok, errs
}

// Histogram returns a merged copy of op's latencies in microseconds
// (intended-time latencies when intended and enabled).
func (m *Measurements) Histogram(op OpType, intended bool) *hdrhistogram.Histogram {
	h, _, _ := m.merged(int(op), intended)
	return h
}

// Combined returns a merged copy of every top-level operation's latency in
// microseconds; with intended (and a target rate) from the intended start.
func (m *Measurements) Combined(intended bool) *hdrhistogram.Histogram {
	h, _, _ := m.merged(allSlot, intended)
	return h
}

// LatencyStats summarizes one histogram. Latencies are in microseconds.
type LatencyStats struct {
	Operations int64   `json:"operations"`
	Errors     int64   `json:"errors"`
	MeanUs     float64 `json:"mean_us"`
	MinUs      int64   `json:"min_us"`
	P50Us      int64   `json:"p50_us"`
	P90Us      int64   `json:"p90_us"`
	P95Us      int64   `json:"p95_us"`
	P99Us      int64   `json:"p99_us"`
	P999Us     int64   `json:"p999_us"`
	MaxUs      int64   `json:"max_us"`
}

// Stats summarizes h (counts ok/errs are passed through).
func Stats(h *hdrhistogram.Histogram, ok, errs int64) LatencyStats {
	if h.TotalCount() == 0 {
		return LatencyStats{Operations: ok + errs, Errors: errs}
	}
	return LatencyStats{
		Operations: ok + errs, Errors: errs,
		MeanUs: h.Mean(), MinUs: h.Min(), MaxUs: h.Max(),
		P50Us: h.ValueAtQuantile(50), P90Us: h.ValueAtQuantile(90), P95Us: h.ValueAtQuantile(95),
		P99Us: h.ValueAtQuantile(99), P999Us: h.ValueAtQuantile(99.9),
	}
}

// CountAbove returns how many values recorded in h are above v (same unit).
// A value counts by its bucket, as HdrHistogram keeps it: one in the
// bucket that holds v is above v only when that bucket's lowest equivalent
// value is.
func CountAbove(h *hdrhistogram.Histogram, v int64) int64 {
	n := int64(0)
	for _, b := range h.Distribution() {
		if b.From > v {
			n += b.Count
		}
	}
	return n
}

// OpStats is the summary of one operation type.
type OpStats struct {
	Op       string        `json:"op"`
	Latency  LatencyStats  `json:"latency"`
	Intended *LatencyStats `json:"intended,omitempty"`
}

// Summary is the result of a phase's measurements.
type Summary struct {
	Ops []OpStats `json:"ops"`
	// All covers every top-level operation; Intended latencies when a
	// target rate was set.
	All OpStats `json:"all"`
}

func (m *Measurements) opStats(slot int, name string) (OpStats, bool) {
	h, ok, errs := m.merged(slot, false)
	if ok+errs == 0 {
		return OpStats{Op: name}, false
	}
	s := OpStats{Op: name, Latency: Stats(h, ok, errs)}
	if m.intended {
		hi, _, _ := m.merged(slot, true)
		st := Stats(hi, ok, errs)
		s.Intended = &st
	}
	return s, true
}

// Summary computes per-operation and combined statistics.
func (m *Measurements) Summary() Summary {
	var sum Summary
	for op := OpType(0); op < numOps; op++ {
		if s, ok := m.opStats(int(op), op.String()); ok {
			sum.Ops = append(sum.Ops, s)
		}
	}
	sum.All, _ = m.opStats(allSlot, "ALL")
	return sum
}

// SeriesPoint is the latency of the operations started in one interval.
type SeriesPoint struct {
	Offset     time.Duration `json:"offset_ns"` // interval start since EnableSeries' start
	Operations int64         `json:"operations"`
	P50Us      int64         `json:"p50_us"`
	P99Us      int64         `json:"p99_us"`
	MaxUs      int64         `json:"max_us"`
}

// Series returns the latency time series (empty unless EnableSeries was called).
func (m *Measurements) Series() []SeriesPoint {
	m.seriesMu.Lock()
	defer m.seriesMu.Unlock()
	iv := time.Duration(m.interval.Load())
	out := make([]SeriesPoint, len(m.series))
	for i, h := range m.series {
		out[i].Offset = time.Duration(i) * iv
		if h != nil && h.TotalCount() > 0 {
			out[i].Operations = h.TotalCount()
			out[i].P50Us = h.ValueAtQuantile(50)
			out[i].P99Us = h.ValueAtQuantile(99)
			out[i].MaxUs = h.Max()
		}
	}
	return out
}

// WriteSummary prints YCSB's text summary lines for a phase:
//
//	[OVERALL], RunTime(ms), 10003
//	[OVERALL], Throughput(ops/sec), 998.7
//	[READ], Operations, 9512
//	[READ], AverageLatency(us), 4321.0
//	...
//	[Intended-READ], 99thPercentileLatency(us), 8123
func WriteSummary(w io.Writer, elapsed time.Duration, ops int64, s Summary) error {
	tput := 0.0
	if elapsed > 0 {
		tput = float64(ops) / elapsed.Seconds()
	}
	if _, err := fmt.Fprintf(w, "[OVERALL], RunTime(ms), %d\n[OVERALL], Throughput(ops/sec), %.1f\n",
		elapsed.Milliseconds(), tput); err != nil {
		return err
	}
	line := func(name string, l LatencyStats) error {
		_, err := fmt.Fprintf(w, "[%s], Operations, %d\n[%s], AverageLatency(us), %.1f\n[%s], MinLatency(us), %d\n"+
			"[%s], MaxLatency(us), %d\n[%s], 50thPercentileLatency(us), %d\n[%s], 90thPercentileLatency(us), %d\n"+
			"[%s], 95thPercentileLatency(us), %d\n[%s], 99thPercentileLatency(us), %d\n"+
			"[%s], 99.9PercentileLatency(us), %d\n[%s], Return=OK, %d\n",
			name, l.Operations, name, l.MeanUs, name, l.MinUs, name, l.MaxUs, name, l.P50Us, name, l.P90Us,
			name, l.P95Us, name, l.P99Us, name, l.P999Us, name, l.Operations-l.Errors)
		if err == nil && l.Errors > 0 {
			_, err = fmt.Fprintf(w, "[%s], Return=ERROR, %d\n", name, l.Errors)
		}
		return err
	}
	for _, o := range s.Ops {
		if err := line(o.Op, o.Latency); err != nil {
			return err
		}
		if o.Intended != nil {
			if err := line("Intended-"+o.Op, *o.Intended); err != nil {
				return err
			}
		}
	}
	return nil
}
