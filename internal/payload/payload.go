// Package payload feeds the simulator's load feedback to a policy: queue
// length and service time that the simulator (sim Config.Feedback) attaches
// to a response as custom payload. No real Cassandra sends it, so it is not
// part of the product API; the simulator-side tools (cmd/ycsb-lite, tests)
// use it, and every comparison names it where it is on.
package payload

import "sync"

// reader records the payload of a response from host for policy p; ok is
// false when p or host is not of the reader's driver.
type reader func(p, host any, payload map[string][]byte) (found, ok bool)

var (
	mu      sync.RWMutex
	readers []reader
)

// Register adds the reader of a policy adapter (called from its init).
func Register(r func(p, host any, payload map[string][]byte) (found, ok bool)) {
	mu.Lock()
	defer mu.Unlock()
	readers = append(readers, r)
}

// Record gives policy p the feedback in payload, from a response of host
// (the driver's *HostInfo): the EWMAs of q_s and 1/mu_s, read from the
// 8-byte big-endian uint64s under the simulator's keys. It reports whether
// feedback was found; false too when p is not a tailroute policy.
func Record(p, host any, payload map[string][]byte) bool {
	mu.RLock()
	defer mu.RUnlock()
	for _, r := range readers {
		if found, ok := r(p, host, payload); ok {
			return found
		}
	}
	return false
}
