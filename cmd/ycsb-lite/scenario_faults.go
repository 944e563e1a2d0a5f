package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	gocql2 "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute/internal/cqlerr"
	"github.com/tailroute/tailroute/internal/report"
	"github.com/tailroute/tailroute/sim"
)

// faultRecord is what a fault scenario reports about its fault: the node it
// acts on and the wall-clock times it began and ended (zero end = lasted to
// the end of the run). Written by the scenario's goroutine, read after its
// stop function returned.
type faultRecord struct {
	mu         sync.Mutex
	node       string
	start, end time.Time
}

func (f *faultRecord) begin(node string) {
	f.mu.Lock()
	f.node, f.start = node, time.Now()
	f.mu.Unlock()
}

func (f *faultRecord) finish() {
	f.mu.Lock()
	f.end = time.Now()
	f.mu.Unlock()
}

func (f *faultRecord) get() (node string, start, end time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.node, f.start, f.end
}

// faultUntil is the fraction of the run at which a scenario's fault ends:
// -fault-until, or def when the flag was left at -1.
func (e *scenarioEnv) faultUntil(def float64) float64 {
	if e.params.faultUntil < 0 {
		return def
	}
	return e.params.faultUntil
}

// setModel changes n's service model with fn.
func setModel(n *sim.Node, fn func(*sim.ServiceModel)) error {
	m := n.Model()
	fn(&m)
	return n.SetModel(m)
}

func init() {
	scenarios["error-node"] = scenarioSpec{
		name: "error-node", help: "one node fails -error-rate (0.5) of its requests with -error-kind (overloaded) from the start until -fault-until of the run (default: to the end)",
		start: func(ctx context.Context, env *scenarioEnv) (func(), error) {
			n, err := env.targetNode()
			if err != nil {
				return nil, err
			}
			if err := setModel(n, func(m *sim.ServiceModel) { m.ErrorRate, m.InjectedError = env.params.errorRate, env.params.errorKind }); err != nil {
				return nil, fmt.Errorf("error-node: %w", err)
			}
			env.fault.begin(n.IP())
			env.logf("error-node: %s fails %g of its requests with %s", n.IP(), env.params.errorRate, env.params.errorKind)
			return background(ctx, func(ctx context.Context) {
				atProgress(ctx, env, env.faultUntil(1), func() {
					if err := setModel(n, func(m *sim.ServiceModel) { m.ErrorRate = 0 }); err != nil {
						env.logf("error-node: %v", err)
						return
					}
					env.fault.finish()
					env.logf("error-node: %s stops failing", n.IP())
				})
			}), nil
		},
	}
	scenarios["two-slow"] = scenarioSpec{
		name: "two-slow", help: "two nodes (the last two) serve -slowdown (5) times slower for the whole run",
		start: func(ctx context.Context, env *scenarioEnv) (func(), error) {
			nodes := env.cluster.Nodes()
			if len(nodes) < 3 {
				return nil, errors.New("two-slow needs at least 3 nodes (-nodes)")
			}
			for _, n := range nodes[len(nodes)-2:] {
				if err := setModel(n, func(m *sim.ServiceModel) { m.Slowdown = env.params.slowdown }); err != nil {
					return nil, fmt.Errorf("two-slow: %w", err)
				}
				env.logf("two-slow: %s serves %gx slower", n.IP(), env.params.slowdown)
			}
			return func() {}, nil
		},
	}
	scenarios["flapping"] = scenarioSpec{
		name: "flapping", help: "one node is stopped and restarted every -flap-every (2s): down for the first half of each period, up for the second",
		start: func(ctx context.Context, env *scenarioEnv) (func(), error) {
			n, err := env.targetNode()
			if err != nil {
				return nil, err
			}
			half := env.params.flapEvery / 2
			env.logf("flapping: %s down %v of every %v", n.IP(), half, env.params.flapEvery)
			return background(ctx, func(ctx context.Context) {
				t := time.NewTimer(half)
				defer t.Stop()
				down := false
				defer func() {
					if down {
						_ = n.Restart() // leave the cluster whole for the next policy's run
					}
				}()
				for {
					if !down {
						if err := n.Stop(); err != nil {
							env.logf("flapping: stopping %s: %v", n.IP(), err)
							return
						}
					} else if err := n.Restart(); err != nil {
						env.logf("flapping: restarting %s: %v", n.IP(), err)
						return
					}
					down = !down
					t.Reset(half)
					select {
					case <-ctx.Done():
						return
					case <-t.C:
					}
				}
			}), nil
		},
	}
	scenarios["recovering"] = scenarioSpec{
		name: "recovering", help: "one node serves 10x slower from the start until -fault-until (0.5) of the run, then normally; reports the time until it gets its fair share again",
		start: func(ctx context.Context, env *scenarioEnv) (func(), error) {
			n, err := env.targetNode()
			if err != nil {
				return nil, err
			}
			if err := setModel(n, func(m *sim.ServiceModel) { m.Slowdown = 10 }); err != nil {
				return nil, fmt.Errorf("recovering: %w", err)
			}
			env.fault.begin(n.IP())
			env.logf("recovering: %s serves 10x slower", n.IP())
			return background(ctx, func(ctx context.Context) {
				atProgress(ctx, env, env.faultUntil(0.5), func() {
					if err := setModel(n, func(m *sim.ServiceModel) { m.Slowdown = 1 }); err != nil {
						env.logf("recovering: %v", err)
						return
					}
					env.fault.finish()
					env.logf("recovering: %s serves normally again", n.IP())
				})
			}), nil
		},
	}
}

// Recovery rule: after a fault ends, a node has its fair share back at the
// end of the first run of recoveryWindows consecutive 100 ms windows in
// which it received at least recoveryShare of its fair share (1/nodes) of
// the requests all nodes received.
const (
	recoveryWindows = 5
	recoveryShare   = 0.75
)

// faultStats computes the fault node's request share while the fault lasted
// and, when it ended before the run did, the time until it got its fair
// share back (see recoveryWindows). windows holds the attempts sent to each
// node per 100 ms from the run's start (runStart); the last window, still
// filling when the run ended, is ignored.
func faultStats(node string, start, end, runStart time.Time, windows map[string][]uint64) *report.FaultStats {
	if node == "" {
		return nil
	}
	idx := func(t time.Time) int {
		k := int(t.Sub(runStart) / (100 * time.Millisecond))
		return max(k, 0)
	}
	n := 0
	for _, w := range windows {
		n = max(n, len(w)-1)
	}
	sum := func(from, to int) (own, all uint64) {
		for h, w := range windows {
			for k := from; k < to && k < len(w); k++ {
				all += w[k]
				if h == node {
					own += w[k]
				}
			}
		}
		return own, all
	}
	fs := &report.FaultStats{Node: node, RecoveryMs: -1}
	faultEnd := n
	if !end.IsZero() {
		faultEnd = min(idx(end), n)
	}
	if own, all := sum(idx(start), faultEnd); all > 0 {
		fs.ShareDuringFault = float64(own) / float64(all)
	}
	if end.IsZero() {
		return fs
	}
	fs.Ended = true
	fair := 1 / float64(len(windows))
	// the first whole window after the fault ended
	first := idx(end) + 1
	for k := first; k+recoveryWindows <= n; k++ {
		own, all := sum(k, k+recoveryWindows)
		if all > 0 && float64(own)/float64(all) >= recoveryShare*fair {
			at := runStart.Add(time.Duration(k+recoveryWindows) * 100 * time.Millisecond)
			fs.RecoveryMs = float64(at.Sub(end)) / float64(time.Millisecond)
			break
		}
	}
	if own, all := sum(first, n); all > 0 {
		fs.ShareAfterFault = float64(own) / float64(all)
	}
	return fs
}

// errorKinds counts a client's failed operations by kind (-retries decides
// whether a failed attempt becomes a failed operation).
type errorKinds struct {
	mu sync.Mutex
	n  map[string]int64
}

func (e *errorKinds) add(err error) {
	k := errorKind(err)
	e.mu.Lock()
	if e.n == nil {
		e.n = map[string]int64{}
	}
	e.n[k]++
	e.mu.Unlock()
}

func (e *errorKinds) snapshot() map[string]int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]int64, len(e.n))
	for k, v := range e.n {
		out[k] = v
	}
	return out
}

// errorKind names an operation's error, of either driver: the CQL error
// of the last attempt (overloaded, unavailable, read_timeout,
// write_timeout, other server errors by code), the client-side timeout, no
// host left to try, a cancelled context, or "other".
func errorKind(err error) string {
	var re cqlerr.RequestError // either driver's RequestError: an error with Code() int
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return "cancelled"
	case errors.Is(err, gocql.ErrTimeoutNoResponse) || errors.Is(err, gocql2.ErrTimeoutNoResponse):
		return "client_timeout"
	case errors.Is(err, gocql.ErrNoConnections) || errors.Is(err, gocql.ErrConnectionClosed) ||
		errors.Is(err, gocql2.ErrNoConnections) || errors.Is(err, gocql2.ErrConnectionClosed):
		return "no_connection"
	case errors.As(err, &re):
		switch re.Code() {
		case cqlerr.CodeOverloaded:
			return "overloaded"
		case cqlerr.CodeUnavailable:
			return "unavailable"
		case cqlerr.CodeReadTimeout:
			return "read_timeout"
		case cqlerr.CodeWriteTimeout:
			return "write_timeout"
		}
		return fmt.Sprintf("server_0x%04x", re.Code())
	}
	return "other"
}

// attemptWindows counts attempts per host (fed by the driver's query
// observer, as hostCounter) and 100 ms window from start (set before on), for FaultStats: the share the
// policies are judged on is attempts sent, whatever their outcome (a
// node's own counters see only what it served).
type attemptWindows struct {
	start time.Time
	on    atomic.Bool
	mu    sync.Mutex
	wins  map[string][]uint64
}

// record counts one attempt on the host at ip started at start (while on).
func (a *attemptWindows) record(ip string, start time.Time) {
	if !a.on.Load() {
		return
	}
	k := int(start.Sub(a.start) / (100 * time.Millisecond))
	if k < 0 || k > 1<<20 {
		return
	}
	a.mu.Lock()
	if a.wins == nil {
		a.wins = map[string][]uint64{}
	}
	w := a.wins[ip]
	for len(w) <= k {
		w = append(w, 0)
	}
	w[k]++
	a.wins[ip] = w
	a.mu.Unlock()
}

// merge adds a's windows into into (host -> windows), each padded to n.
func (a *attemptWindows) merge(into map[string][]uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for h, w := range a.wins {
		dst := into[h]
		for len(dst) < len(w) {
			dst = append(dst, 0)
		}
		for k, v := range w {
			dst[k] += v
		}
		into[h] = dst
	}
}
