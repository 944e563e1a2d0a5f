// The datastax policy's driver-side core (dsCore): the rule is
// internal/peers.DataStax (the port of the DataStax Java driver 4.x
// default policy, its doc comment the source and every difference); dsCore
// hands it the hosts, the clock and the attempts as the drivers report
// them. It is bound to gocql v1 in datastax.go and to the v2 driver in
// datastax_v2.go (generated from datastax.go).

package main

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tailroute/tailroute/internal/peers"
	"github.com/tailroute/tailroute/internal/selector"
)

// dsCore runs peers.DataStax for a session: hosts by index (hostKey), the
// time since the policy was built, and the attempts, counted as the Java
// driver counts them. The driver reads a node's in-flight count from its
// connection pool, orphaned stream ids (a client timeout, a cancelled
// speculative execution) included until the node answers; its
// RequestTracker records responses (success or error from the node), not
// client timeouts. Neither gocql driver offers these, so the policy counts
// for itself, through the query observer its adapter's wire function chains
// in, which sees each attempt's real error (the drivers Mark a cancelled
// attempt with nil):
//
//   - a host is in flight (Sent) from the moment NextHost hands it out
//     until its attempt ends; an attempt that ends with a response (nil,
//     not found, any error the node sent) is Done;
//   - an attempt that ends without a response (context cancelled or
//     expired, the driver's ErrTimeoutNoResponse) is NoResponse: it stays
//     in flight as an orphan until the node answers a later request or its
//     estimated release, at most the session timeout (see peers.DataStax);
//   - an attempt that fails on the connection is Done, as the driver's
//     onNodeError records it.
//
// Without the observer (a bare policy) Mark is the end of the attempt and
// every Mark a response: the first Mark of a handed-out host is Done, a
// later one (a retry on the same host) one more attempt, Sent and Done. A
// host the driver skips without an attempt (it went down between plan and
// send) is never observed, so the adapters' HostUp, HostDown and RemoveHost
// Reset it.
//
// The replica set comes from the driver's token-aware policy over a round
// robin of the local DC (every host when localDC is ""), the same token
// metadata the other policies use; that round robin is the rest of the
// plan.
type dsCore struct {
	// port holds the rule as its core: every call to the rule holds
	// port's lock (peers.DataStax is not safe for concurrent use) and names
	// hosts by port's indices.
	port      *peerState
	rule      *peers.DataStax      // port's core
	now       func() time.Duration // monotonic clock (port's by default); tests replace it
	observed  atomic.Bool          // the observer is installed: it ends attempts, not Mark
	maxOrphan time.Duration        // longest an orphan stays in flight (the session timeout)
}

// dsNode is what the core needs of a driver's host (both drivers'
// *HostInfo): its identity.
type dsNode interface {
	HostID() string
	ConnectAddress() net.IP
}

// newDSCore returns the core; seed fixes the replica shuffle.
func newDSCore(seed int64) *dsCore {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
	rule := peers.NewDataStax(selector.SelectorConfig{Rand: rng, Clients: 1})
	port := newPeerState(rule, nil)
	return &dsCore{port: port, rule: rule, now: port.now, maxOrphan: 5 * time.Second}
}

// hostKey names a host: its host ID, else its connect address.
func hostKey[H dsNode](h H) string {
	if id := h.HostID(); id != "" {
		return id
	}
	return h.ConnectAddress().String()
}

// with runs f with host k's index in the rule and the time, under the
// lock.
func (c *dsCore) with(k string, f func(id int32, now time.Duration)) {
	c.port.mu.Lock()
	defer c.port.mu.Unlock()
	f(c.port.id(k), c.now())
}

// resetKey is the rule's Reset of host k (see the type's comment).
func (c *dsCore) resetKey(k string) {
	c.with(k, func(id int32, now time.Duration) { c.rule.Reset(now, id) })
}

// dsOrder sorts the replicas in place as the rule's Order does; key names
// a replica.
func dsOrder[S any](c *dsCore, replicas []S, key func(S) string) {
	if len(replicas) < 2 {
		return
	}
	ids := make([]int32, len(replicas))
	byID := make(map[int32]S, len(replicas))
	c.port.mu.Lock()
	for i, h := range replicas {
		ids[i] = c.port.id(key(h))
		byID[ids[i]] = h
	}
	c.rule.Order(c.now(), ids)
	c.port.mu.Unlock()
	for i, id := range ids {
		replicas[i] = byID[id]
	}
}

// dsQueryPlan is the query plan over a token-aware plan (next, whose fallback
// hosts isFallback tells; key names a host): the ordered replicas (dsOrder),
// then the fallback's hosts. Every host handed out is Sent and goes out
// through wrap, with its index and the time, which lets its Mark end the
// attempt.
func dsQueryPlan[S comparable](c *dsCore, next func() S, isFallback func(S) bool, key func(S) string, wrap func(S, int32, time.Duration) S) func() S {
	var zero S
	replicas, pending := splitReplicas(next, isFallback)
	dsOrder(c, replicas, key)
	var mu sync.Mutex // the drivers serialize NextHost, but hedging wrappers may not
	i := 0
	return func() S {
		mu.Lock()
		defer mu.Unlock()
		var h S
		switch {
		case i < len(replicas):
			h = replicas[i]
			i++
		case pending != zero:
			h, pending = pending, zero
		default:
			h = next()
		}
		if h == zero {
			return zero
		}
		var id int32
		var at time.Duration
		c.with(key(h), func(hid int32, now time.Duration) {
			c.rule.Sent(now, hid)
			id, at = hid, now
		})
		return wrap(h, id, at)
	}
}

// wired records that the adapter installed the observer, with the
// session's timeout (0: keep the default) as the orphans' bound.
func (c *dsCore) wired(timeout time.Duration) {
	c.port.mu.Lock()
	defer c.port.mu.Unlock()
	if timeout > 0 {
		c.maxOrphan = timeout
	}
	c.observed.Store(true)
}

// marked is the Mark of host id, handed out at at: without the observer the
// first Mark (done) ends its attempt, a later one is one more attempt, and
// every Mark is a response; with the observer, Mark does nothing of its own.
func (c *dsCore) marked(id int32, at time.Duration, done *atomic.Bool) {
	if c.observed.Load() {
		return
	}
	c.port.mu.Lock()
	defer c.port.mu.Unlock()
	now := c.now()
	if !done.CompareAndSwap(false, true) {
		c.rule.Sent(now, id)
	}
	c.rule.Done(now, id, now-at, selector.Feedback{})
}

// observe ends one attempt of host key after elapsed; noResp: it ended
// without the node's response (noResponse).
func (c *dsCore) observe(key string, elapsed time.Duration, noResp bool) {
	c.with(key, func(id int32, now time.Duration) {
		if noResp {
			c.rule.NoResponse(now, id, elapsed, c.maxOrphan)
		} else {
			c.rule.Done(now, id, elapsed, selector.Feedback{})
		}
	})
}

// noResponse reports an attempt that ended without the node's response:
// the caller gave up (context) or the driver's client-side timeout
// (timeout, the driver's ErrTimeoutNoResponse).
func noResponse(ctx context.Context, err, timeout error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, timeout) {
		return true
	}
	return ctx != nil && ctx.Err() != nil
}
