package track

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tailroute/tailroute/internal/hist"
	"github.com/tailroute/tailroute/tracker"
)

// Tracker holds the state of every host it has seen and cluster-wide
// aggregates. Hosts are created on first use and live until Remove.
type Tracker struct {
	cfg   tracker.Config
	clock tracker.Clock

	mu    sync.Mutex
	hosts atomic.Pointer[hostSet] // copy-on-write

	qcache atomic.Pointer[quantileCache]

	outOfZone atomic.Uint64 // every host's CountOutOfZone, removed hosts' included

	off Rule // rules turned off (SetOff)

	queueing      atomic.Bool   // RuleQueueing: the polled hosts queue (updateQueueing)
	queueingUntil atomic.Int64  // clock time at which a sample queueing counted stops counting; 0 = none
	clients       atomic.Uint64 // w in force (SetClients), float64 bits; 0: none given
}

// hostSet is the tracked hosts, by ID and as a list: the hot path's
// passes over every host (the other hosts' mean R_s of an idle host's
// View, MaxSilence) walk the list, not the map.
type hostSet struct {
	byID map[string]*Host
	list []*Host
}

func newHostSet(m map[string]*Host) *hostSet {
	s := &hostSet{byID: m, list: make([]*Host, 0, len(m))}
	for _, h := range m {
		s.list = append(s.list, h)
	}
	return s
}

// quantileCache keeps the last cluster-wide quantiles for QuantileCacheTTL so
// that a caller asking for a quantile on every request (speculative
// execution) does not merge the per-host histograms every time.
type quantileCache struct {
	at    time.Duration
	total uint64
	n     int
	q     [4]float64
	d     [4]time.Duration
	ok    [4]bool
}

// QuantileCacheTTL is how long a cluster-wide quantile is reused while new
// samples arrive.
const QuantileCacheTTL = 10 * time.Millisecond

// New returns a Tracker; cfg zero fields take defaults. Out-of-range fields
// are reported as an error naming the field, the value and the allowed range.
func New(cfg tracker.Config) (*Tracker, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := &Tracker{cfg: cfg, clock: cfg.Clock}
	t.hosts.Store(newHostSet(map[string]*Host{}))
	return t, nil
}

// SetOff turns the rules in off off, for an ablation; call it before
// adding hosts.
func (t *Tracker) SetOff(off Rule) { t.off = off }

// Off returns the rules turned off (SetOff).
func (t *Tracker) Off() Rule { return t.off }

// Config returns the effective configuration.
func (t *Tracker) Config() tracker.Config { return t.cfg }

// Clock returns the tracker's clock.
func (t *Tracker) Clock() tracker.Clock { return t.clock }

// Now returns the tracker clock's current time.
func (t *Tracker) Now() time.Duration { return t.clock.Now() }

// Host returns the state of host id, creating it if needed.
func (t *Tracker) Host(id string) *Host {
	if h, ok := t.hosts.Load().byID[id]; ok {
		return h
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.hosts.Load().byID
	if h, ok := old[id]; ok {
		return h
	}
	h := newHost(id, t, t.clock.Now())
	m := make(map[string]*Host, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[id] = h
	t.hosts.Store(newHostSet(m))
	return h
}

// Lookup returns the state of host id if it exists.
func (t *Tracker) Lookup(id string) (*Host, bool) {
	h, ok := t.hosts.Load().byID[id]
	return h, ok
}

// Remove forgets host id.
func (t *Tracker) Remove(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.hosts.Load().byID
	if _, ok := old[id]; !ok {
		return
	}
	m := make(map[string]*Host, len(old))
	for k, v := range old {
		if k != id {
			m[k] = v
		}
	}
	t.hosts.Store(newHostSet(m))
}

// Hosts returns the tracked hosts sorted by ID.
func (t *Tracker) Hosts() []*Host {
	out := append([]*Host(nil), t.hosts.Load().list...)
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// Snapshot returns a snapshot of every host, sorted by ID.
func (t *Tracker) Snapshot() []tracker.HostSnapshot {
	hs := t.Hosts()
	out := make([]tracker.HostSnapshot, len(hs))
	for i, h := range hs {
		out[i] = h.Snapshot()
	}
	return out
}

// LatencyQuantile returns the cluster-wide q-quantile (0 < q <= 1) of recent
// attempt latencies (the current and previous LatencyWindow of every host)
// and false when fewer than MinQuantileSamples were recorded or q is out of
// range. The value is the highest of the histogram bucket holding the sample
// of rank round(q*n), as hdrhistogram reports it: at most 6.25% above the
// sample. Hosts record into their own histograms only (no shared cache line
// on the hot path); this merges them, and caches the result for
// QuantileCacheTTL (or, while it was not ok, until a host observes a sample).
func (t *Tracker) LatencyQuantile(q float64) (time.Duration, bool) {
	if !(q > 0 && q <= 1) {
		return 0, false
	}
	now := t.clock.Now()
	hosts := t.hosts.Load().list
	var total uint64
	for _, h := range hosts {
		total += h.samples.Load()
	}
	c := t.qcache.Load()
	if c != nil && now-c.at < QuantileCacheTTL && now >= c.at {
		for i := 0; i < c.n; i++ {
			if c.q[i] == q && (c.ok[i] || c.total == total) {
				return c.d[i], c.ok[i]
			}
		}
	}
	var merged hist.Counts
	var n uint64
	for _, h := range hosts {
		n += h.hist.AddTo(now, &merged)
	}
	d := merged.Quantile(n, q)
	ok := n >= uint64(t.cfg.MinQuantileSamples)
	nc := &quantileCache{at: now, total: total}
	if c != nil && now-c.at < QuantileCacheTTL && now >= c.at && c.total == total {
		*nc = *c
	}
	if nc.n == len(nc.q) {
		nc.n = 0
	}
	for i := 0; i < nc.n; i++ { // replace an entry for q if present
		if nc.q[i] == q {
			nc.q[i], nc.d[i], nc.ok[i] = q, d, ok
			t.qcache.Store(nc)
			return d, ok
		}
	}
	nc.q[nc.n], nc.d[nc.n], nc.ok[nc.n] = q, d, ok
	nc.n++
	t.qcache.Store(nc)
	return d, ok
}

// ResponseTime returns the mean R_s (EWMA of attempt latencies) of the hosts
// that have samples, and whether any has.
func (t *Tracker) ResponseTime() (time.Duration, bool) {
	r, ok := t.meanResponseTime()
	return time.Duration(r), ok
}

func (t *Tracker) meanResponseTime() (float64, bool) { return t.meanResponseTimeExcept(nil) }

// meanResponseTimeExcept is the mean R_s of the hosts with samples other
// than x.
func (t *Tracker) meanResponseTimeExcept(x *Host) (float64, bool) {
	var sum float64
	n := 0
	for _, h := range t.hosts.Load().list {
		if h == x {
			continue
		}
		if r, ok := h.resp.get(); ok {
			sum += r
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// priorResponseTime scores a host without samples: the mean of the others
// (so that a new or recovered host competes on equal terms), or
// DefaultResponseTime.
func (t *Tracker) priorResponseTime() float64 { return t.priorResponseTimeExcept(nil) }

// priorResponseTimeExcept is priorResponseTime over the hosts other than x.
func (t *Tracker) priorResponseTimeExcept(x *Host) float64 {
	if r, ok := t.meanResponseTimeExcept(x); ok {
		return r
	}
	return float64(t.cfg.DefaultResponseTime)
}

// successFloor is the floor of a failing host's sticky success rate:
// 0.0001 divided by the number of hosts (fallback cascade).
func (t *Tracker) successFloor() float64 {
	n := max(len(t.hosts.Load().list), 1)
	return 0.0001 / float64(n)
}
