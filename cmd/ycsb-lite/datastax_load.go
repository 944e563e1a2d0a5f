// The datastax policy's load signals (see datastaxPolicy): per-host state,
// requests in flight with orphans, responses, and the observer that ends
// attempts; the query plan is in datastax.go.

package main

import (
	"context"
	"errors"
	"time"

	"github.com/gocql/gocql"
)

func hostKey(h *gocql.HostInfo) string {
	if id := h.HostID(); id != "" {
		return id
	}
	return h.ConnectAddress().String()
}

func (p *datastaxPolicy) host(h *gocql.HostInfo) *dsHost {
	k := hostKey(h)
	p.hostsMu.RLock()
	s := p.hosts[k]
	p.hostsMu.RUnlock()
	if s != nil {
		return s
	}
	p.hostsMu.Lock()
	defer p.hostsMu.Unlock()
	if s = p.hosts[k]; s == nil {
		s = &dsHost{}
		p.hosts[k] = s
	}
	return s
}

// reset forgets a host's in-flight count (see the type's comment).
func (p *datastaxPolicy) reset(h *gocql.HostInfo) {
	s := p.host(h)
	s.inFlight.Store(0)
	s.mu.Lock()
	s.orphans = s.orphans[:0]
	s.mu.Unlock()
}

// inFlight is the driver's getInFlight: attempts not ended plus orphans
// not yet released at now.
func (p *datastaxPolicy) inFlight(s *dsHost, now time.Duration) int64 {
	n := s.inFlight.Load()
	s.mu.Lock()
	k := 0
	for _, o := range s.orphans {
		if o.releaseAt > now {
			s.orphans[k] = o
			k++
		}
	}
	s.orphans = s.orphans[:k]
	n += int64(k)
	s.mu.Unlock()
	return n
}

// endAttempt ends one attempt's in-flight count (never below zero).
func endAttempt(s *dsHost) {
	for {
		v := s.inFlight.Load()
		if v <= 0 || s.inFlight.CompareAndSwap(v, v-1) {
			return
		}
	}
}

// observe ends one attempt of host h sent at sent (clock time) after
// elapsed, with its real error (see the type's comment).
func (p *datastaxPolicy) observe(ctx context.Context, h *gocql.HostInfo, elapsed time.Duration, err error) {
	if h == nil {
		return
	}
	s := p.host(h)
	now := p.now()
	sent := now - elapsed
	endAttempt(s)
	if noResponse(ctx, err) {
		wait := max(2*elapsed, time.Duration(2*s.meanRespLoad()))
		s.mu.Lock()
		if len(s.orphans) < maxOrphans {
			s.orphans = append(s.orphans, dsOrphan{sent: sent, releaseAt: now + min(wait, p.maxOrphan)})
		}
		s.mu.Unlock()
		return
	}
	s.mu.Lock()
	if s.meanResp == 0 {
		s.meanResp = float64(elapsed)
	} else {
		s.meanResp += 0.1 * (float64(elapsed) - s.meanResp)
	}
	k := 0
	for _, o := range s.orphans {
		if o.sent > sent { // sent after this request: not known to be answered
			s.orphans[k] = o
			k++
		}
	}
	s.orphans = s.orphans[:k]
	s.mu.Unlock()
	p.responded(s)
}

func (s *dsHost) meanRespLoad() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.meanResp
}

// noResponse reports an attempt that ended without the node's response:
// the caller gave up (context) or gocql's client-side timeout.
func noResponse(ctx context.Context, err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, gocql.ErrTimeoutNoResponse) {
		return true
	}
	return ctx != nil && ctx.Err() != nil
}

// dsObserver is the query observer wireDatastax chains in.
type dsObserver struct {
	p    *datastaxPolicy
	next gocql.QueryObserver
}

func (o dsObserver) ObserveQuery(ctx context.Context, q gocql.ObservedQuery) {
	o.p.observe(ctx, q.Host, q.End.Sub(q.Start), q.Err)
	if o.next != nil {
		o.next.ObserveQuery(ctx, q)
	}
}

// wireDatastax installs p and its observer (chained before any observer
// already set) into cfg; the session's timeout bounds orphans.
func wireDatastax(cfg *gocql.ClusterConfig, p *datastaxPolicy) {
	cfg.PoolConfig.HostSelectionPolicy = p
	cfg.QueryObserver = dsObserver{p: p, next: cfg.QueryObserver}
	if cfg.Timeout > 0 {
		p.maxOrphan = cfg.Timeout
	}
	p.observed.Store(true)
}

func (p *datastaxPolicy) HostUp(h *gocql.HostInfo) {
	p.reset(h)
	p.HostSelectionPolicy.HostUp(h)
}

func (p *datastaxPolicy) HostDown(h *gocql.HostInfo) {
	p.reset(h)
	p.HostSelectionPolicy.HostDown(h)
}

func (p *datastaxPolicy) RemoveHost(h *gocql.HostInfo) {
	p.reset(h)
	p.HostSelectionPolicy.RemoveHost(h)
}

// responded records a response (success or error) from s, as the driver's
// updateResponseTimes.
func (p *datastaxPolicy) responded(s *dsHost) {
	now := p.now()
	s.mu.Lock()
	if s.n < 2 {
		s.last[s.n] = now
		s.n++
	} else {
		s.last[0], s.last[1] = s.last[1], now
	}
	s.mu.Unlock()
}
