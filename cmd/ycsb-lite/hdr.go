package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/tailroute/tailroute/internal/ycsb"
)

// HdrHistogram output of a run phase, next to the YCSB summaries:
//
//   - <out>/<policy>-run.hgrm: the percentile distribution of the latency the
//     table reports (from the intended start when a target is set), in
//     milliseconds, as HdrHistogram's PercentilesPrint writes it: the format
//     HdrHistogram's plotter (plotFiles.html) and HistogramLogAnalyzer read.
//   - <out>/<policy>-run.hlog: an HdrHistogram interval log (format 1.3) of
//     the same latency, one histogram per -hdr-interval, values in
//     microseconds (the Interval_Max column is therefore in seconds).
//   - <out>/<policy>-run-<OP>.hgrm: the percentile distribution of each
//     operation type that ran (READ, UPDATE, INSERT, SCAN,
//     READ-MODIFY-WRITE), as YCSB's HdrHistogram exporter writes one per
//     operation.
const (
	hgrmTicksPerHalf = 5    // HdrHistogram's default output resolution
	hgrmUsPerUnit    = 1000 // values in µs, printed in ms
)

// writeHgrm writes h's percentile distribution to path.
func writeHgrm(path string, h *hdrhistogram.Histogram) error {
	var b bytes.Buffer
	if _, err := h.PercentilesPrint(&b, hgrmTicksPerHalf, hgrmUsPerUnit); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// intervalLog builds an HdrHistogram interval log from the cumulative
// histogram of a Measurements: every tick logs what was recorded since the
// previous tick (the difference of the two snapshots), so recording is not
// touched.
type intervalLog struct {
	m        *ycsb.Measurements
	intended bool

	mu     sync.Mutex
	buf    bytes.Buffer
	w      *hdrhistogram.HistogramLogWriter
	prev   []int64
	prevAt time.Time
	err    error
}

func newIntervalLog(m *ycsb.Measurements, start time.Time, comment string) *intervalLog {
	l := &intervalLog{m: m, intended: m.Intended(), prevAt: start}
	l.w = hdrhistogram.NewHistogramLogWriter(&l.buf)
	startMs := start.UnixMilli()
	base := startMs - startMs%1000 // the log's BaseTime line has whole seconds
	l.w.SetBaseTime(base)
	l.err = firstErr(
		l.w.OutputLogFormatVersion(),
		l.w.OutputComment(comment),
		l.w.OutputStartTime(startMs),
		l.w.OutputBaseTime(base),
		l.w.OutputLegend(),
	)
	return l
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// tick logs the interval that ends now; an interval with no operations is
// logged too (an empty histogram), so the log has no gaps.
func (l *intervalLog) tick(now time.Time) {
	snap := l.m.Combined(l.intended).Export()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return
	}
	cur := snap.Counts
	if l.prev != nil && len(l.prev) == len(cur) {
		diff := make([]int64, len(cur))
		for i := range cur {
			diff[i] = cur[i] - l.prev[i]
		}
		snap.Counts = diff
	}
	h := hdrhistogram.Import(snap)
	h.SetStartTimeMs(l.prevAt.UnixMilli())
	h.SetEndTimeMs(now.UnixMilli())
	l.err = l.w.OutputIntervalHistogram(h)
	l.prev, l.prevAt = cur, now
}

// writeTo writes the log to path.
func (l *intervalLog) writeTo(path string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	return os.WriteFile(path, l.buf.Bytes(), 0o644)
}

// startIntervalLog starts logging m's intervals every -hdr-interval from
// start; stop ends it. Both are no-ops with -hdr=false.
func (r *runner) startIntervalLog(ctx context.Context, policy string, m *ycsb.Measurements, start time.Time) (ilog *intervalLog, stop func()) {
	if !r.o.hdr {
		return nil, func() {}
	}
	from := ", from each call's start"
	if m.Intended() {
		from = ", from each operation's intended start (no coordinated omission)"
	}
	ilog = newIntervalLog(m, start, fmt.Sprintf("ycsb-lite %s run phase, policy %s: latency in microseconds%s", r.o.scenario.name, policy, from))
	return ilog, background(ctx, func(ctx context.Context) {
		t := time.NewTicker(r.o.hdrInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				ilog.tick(now)
			}
		}
	})
}

// writeHdr closes ilog's last interval and writes the run phase's .hgrm and
// .hlog into -out; a failure is reported and does not stop the run.
func (r *runner) writeHdr(policy string, m *ycsb.Measurements, ilog *intervalLog) {
	if ilog == nil {
		return
	}
	ilog.tick(time.Now())
	if _, err := writeHdrFiles(r.o.out, policy, m, ilog); err != nil {
		r.warnf("[%s] HdrHistogram output: %v", policy, err)
	}
}

// writeHdrFiles writes the .hgrm and the .hlog of policy's run phase into dir.
func writeHdrFiles(dir, policy string, m *ycsb.Measurements, ilog *intervalLog) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	base := filepath.Join(dir, policy+"-run")
	if err := writeHgrm(base+".hgrm", m.Combined(m.Intended())); err != nil {
		return nil, fmt.Errorf("%s.hgrm: %w", base, err)
	}
	paths := []string{base + ".hgrm"}
	if err := ilog.writeTo(base + ".hlog"); err != nil {
		return paths, fmt.Errorf("%s.hlog: %w", base, err)
	}
	paths = append(paths, base+".hlog")
	// Per operation type beside the totals, as YCSB's HdrHistogram exporter.
	for _, op := range ycsb.OpTypes() {
		h := m.Histogram(op, m.Intended())
		if h.TotalCount() == 0 {
			continue
		}
		p := base + "-" + op.String() + ".hgrm"
		if err := writeHgrm(p, h); err != nil {
			return paths, fmt.Errorf("%s: %w", p, err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}
