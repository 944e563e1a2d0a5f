package main

import (
	"fmt"
	"io"
	"time"

	"github.com/tailroute/tailroute/internal/ycsb"
)

// status reports a running phase on stderr, either as a progress line
// redrawn every second (stderr is a terminal) or as YCSB-style status lines
// every -status-interval (stderr is a file or pipe, or -s), so CI logs and
// nohup runs show progress too.
type status struct {
	w      io.Writer
	policy string
	lines  bool          // status lines rather than a redrawn line
	total  int64         // operations the phase will do; <= 0 = unbounded
	limit  time.Duration // the phase's time limit; 0 = none
	now    func() time.Time
	p99us  func() int64 // the 99th percentile so far, µs

	lastDone int64
	lastAt   time.Duration
}

// newStatus reports on run (recording into m) while it runs, as -s,
// -status-interval and the terminal decide; nil when nothing is reported.
func (r *runner) newStatus(policy string, run *clientRuns, m *ycsb.Measurements) *status {
	o := r.o
	if !o.progress && !o.statusLines {
		return nil
	}
	s := &status{w: r.stderr, policy: policy, lines: o.statusLines, total: run.Total(), limit: o.cfg.MaxExecutionTime, now: time.Now,
		p99us: func() int64 { return m.Combined(m.Intended()).ValueAtQuantile(99) }}
	if o.statusLines {
		run.progressEvery = o.statusInterval
	}
	run.progress = s.report
	return s
}

// done prints the last status line of a phase: how it ended and its
// average rate.
func (s *status) done(res ycsb.Result, done int64) {
	if s == nil || !s.lines {
		return
	}
	p99us := s.p99us()
	elapsed := res.Elapsed
	rate := 0.0
	if elapsed > 0 {
		rate = float64(done) / elapsed.Seconds()
	}
	how := "done"
	switch {
	case res.Interrupted:
		how = "interrupted"
	case res.TimedOut && (s.total <= 0 || done < s.total):
		how = "truncated by the time limit"
	}
	fmt.Fprintf(s.w, "%s [%s] %.1f sec: %d operations, %s; %.1f average ops/sec; p99 %.2f ms\n",
		s.now().Format("2006-01-02 15:04:05"), s.policy, elapsed.Seconds(), done, how, rate, float64(p99us)/1000)
}

// report prints the state after elapsed with done operations.
func (s *status) report(done int64, elapsed time.Duration) {
	p99us := s.p99us()
	rate := 0.0
	if dt := (elapsed - s.lastAt).Seconds(); dt > 0 {
		rate = float64(done-s.lastDone) / dt
	}
	s.lastDone, s.lastAt = done, elapsed
	if !s.lines {
		fmt.Fprintf(s.w, "\r\033[K[%s] %5.1fs %d ops, now %.0f ops/s, p99 so far %.2f ms%s", s.policy, elapsed.Seconds(), done,
			rate, float64(p99us)/1000, s.eta(done, elapsed))
		return
	}
	progress := ""
	if s.total > 0 {
		progress = fmt.Sprintf(" (%.1f %%)", 100*float64(done)/float64(s.total))
	}
	fmt.Fprintf(s.w, "%s [%s] %.0f sec: %d operations%s; %.1f current ops/sec; p99 so far %.2f ms%s\n",
		s.now().Format("2006-01-02 15:04:05"), s.policy, elapsed.Seconds(), done, progress, rate, float64(p99us)/1000, s.eta(done, elapsed))
}

// eta is the estimated time left: the remaining operations at the average
// rate so far, capped by the time limit.
func (s *status) eta(done int64, elapsed time.Duration) string {
	left := time.Duration(-1)
	if s.total > 0 && done > 0 {
		left = time.Duration(float64(elapsed) * float64(s.total-done) / float64(done))
	}
	if s.limit > 0 && (left < 0 || elapsed+left > s.limit) {
		left = max(s.limit-elapsed, 0)
	}
	if left < 0 {
		return ""
	}
	return "; est. " + left.Round(time.Second).String() + " left"
}
