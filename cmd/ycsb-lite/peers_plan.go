// The peer ports' driver-free binding (internal/peers): per-session state,
// the query plan and the measurements, shared by the gocql v1 adapter
// (peers.go) and the v2 adapter (peers_v2.go, generated from peers.go).

package main

import (
	"errors"
	"sync"
	"time"

	"github.com/tailroute/tailroute/internal/peers"
	"github.com/tailroute/tailroute/internal/selector"
)

// peerCore is what the adapters need of a peer port: every type of
// internal/peers has it.
type peerCore interface {
	// Order sorts a query's replicas in place as the port's plan would and
	// returns how many go before the rest of the plan (the others, hosts
	// the port excludes, go after it).
	Order(now time.Duration, replicas []int32) int
	Sent(now time.Duration, s int32)
	Done(now time.Duration, s int32, rtt time.Duration, fb selector.Feedback)
	// Reset is the port's reaction to a host going down or being removed.
	Reset(now time.Duration, s int32)
}

// A peerCore that excludes hosts (LatencyAware) also skips the excluded
// non-replica hosts of the plan; one that reacts to a host coming up
// (LatencyInflight) hears of it.
type (
	peerExcluder interface {
		Excluded(now time.Duration, s int32) bool
	}
	peerUpper interface {
		Up(now time.Duration, s int32)
	}
)

// peerState is one session's peer port: the core (not safe for concurrent
// use, so every call holds mu), its clock (time since the session's policy
// was built) and the hosts' indices.
type peerState struct {
	mu    sync.Mutex
	core  peerCore
	start time.Time
	ids   map[string]int32
	// ignore, when set, leaves an attempt out of the measurements (the
	// Java driver 3.x's fast errors for LatencyAware); only for cores that
	// count nothing in flight, whose Sent does nothing.
	ignore func(error) bool
}

func newPeerState(core peerCore, ignore func(error) bool) *peerState {
	return &peerState{core: core, start: time.Now(), ids: map[string]int32{}, ignore: ignore}
}

// id is host key's index for the core (under mu).
func (p *peerState) id(key string) int32 {
	i, ok := p.ids[key]
	if !ok {
		i = int32(len(p.ids))
		p.ids[key] = i
	}
	return i
}

func (p *peerState) now() time.Duration { return time.Since(p.start) }

// reset tells the core host key went down or was removed.
func (p *peerState) reset(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.core.Reset(p.now(), p.id(key))
}

// up tells the core host key came up, if it listens.
func (p *peerState) up(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if u, ok := p.core.(peerUpper); ok {
		u.Up(p.now(), p.id(key))
	}
}

// observe ends one attempt of host key, elapsed long, ended with err: every
// attempt is a measurement (the sources record responses, node errors,
// timeouts and cancellations alike) unless ignore says otherwise.
func (p *peerState) observe(key string, elapsed time.Duration, err error) {
	if p.ignore != nil && p.ignore(err) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.core.Done(p.now(), p.id(key), elapsed, selector.Feedback{})
}

// latencyAwareIgnores is peers.IgnoresError on an attempt's error.
func latencyAwareIgnores(err error) bool {
	var c interface{ Code() int }
	return errors.As(err, &c) && peers.IgnoresError(c.Code())
}

// peerPlan is the query plan over a token-aware plan (next, whose fallback
// hosts isFallback tells; key names a host): the replicas as the core
// orders them, those it keeps first; then the fallback's hosts, those the
// core excludes (peerExcluder) skipped; then the excluded replicas and the
// skipped hosts, in that order (the C++ driver's LatencyAwareQueryPlan).
// Every host handed out is Sent to the core.
func peerPlan[S comparable](p *peerState, next func() S, isFallback func(S) bool, key func(S) string) func() S {
	var zero S
	replicas, pending := splitReplicas(next, isFallback)
	ids := make([]int32, len(replicas))
	p.mu.Lock()
	for i, h := range replicas {
		ids[i] = p.id(key(h))
	}
	given := append([]int32(nil), ids...)
	keep := p.core.Order(p.now(), ids)
	p.mu.Unlock()
	ordered := make([]S, len(replicas))
	for i, id := range ids {
		for j, g := range given {
			if g == id {
				ordered[i] = replicas[j]
			}
		}
	}
	excl, _ := p.core.(peerExcluder)
	var skipped []S
	last := ordered[keep:]
	fallbackDone := false
	var mu sync.Mutex // the drivers serialize NextHost, but hedging wrappers may not
	return func() S {
		mu.Lock()
		defer mu.Unlock()
		for {
			var h S
			switch {
			case keep > 0:
				h, ordered = ordered[0], ordered[1:]
				keep--
			case !fallbackDone:
				if h, pending = pending, zero; h == zero {
					h = next()
				}
				if h == zero {
					fallbackDone = true
					last = append(last, skipped...)
					continue
				}
				if excl != nil && p.excluded(excl, key(h)) {
					skipped = append(skipped, h)
					continue
				}
			case len(last) > 0:
				h, last = last[0], last[1:]
			default:
				return zero
			}
			p.sent(key(h))
			return h
		}
	}
}

func (p *peerState) excluded(e peerExcluder, key string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return e.Excluded(p.now(), p.id(key))
}

func (p *peerState) sent(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.core.Sent(p.now(), p.id(key))
}
