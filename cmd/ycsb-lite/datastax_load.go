// The datastax core's load signals (see dsCore): requests in flight with
// orphans and responses, driver-free; the adapters' observers feed observe.

package main

import "time"

// inFlight is the driver's getInFlight: attempts not ended plus orphans
// not yet released at now.
func (c *dsCore) inFlight(s *dsHost, now time.Duration) int64 {
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

// observe ends one attempt of host key after elapsed; noResp: it ended
// without the node's response (see the type's comment and noResponse).
func (c *dsCore) observe(key string, elapsed time.Duration, noResp bool) {
	s := c.state(key)
	now := c.now()
	sent := now - elapsed
	endAttempt(s)
	if noResp {
		wait := max(2*elapsed, time.Duration(2*s.meanRespLoad()))
		s.mu.Lock()
		if len(s.orphans) < maxOrphans {
			s.orphans = append(s.orphans, dsOrphan{sent: sent, releaseAt: now + min(wait, c.maxOrphan)})
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
	c.responded(s)
}

func (s *dsHost) meanRespLoad() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.meanResp
}

// responded records a response (success or error) from s, as the driver's
// updateResponseTimes.
func (c *dsCore) responded(s *dsHost) {
	now := c.now()
	s.mu.Lock()
	if s.n < 2 {
		s.last[s.n] = now
		s.n++
	} else {
		s.last[0], s.last[1] = s.last[1], now
	}
	s.mu.Unlock()
}
