package peers

import (
	"math"
	"math/rand/v2"
	"time"
)

// tsAverage is the Java drivers' TimestampedAverage as their latency
// trackers keep it: the DataStax Java driver 3.x
// LatencyAwarePolicy.HostLatencyTracker and autodeskcloud's
// NodeLatencyTracker (the same code; the C++ driver's
// Host::LatencyTracker::update is the same rule).
type tsAverage struct {
	set       bool          // a latency was recorded (Java: current != null)
	timestamp time.Duration // when the last latency was recorded
	average   int64         // ns; -1 until threshold latencies were recorded
	n         int64         // latencies recorded
}

// add is HostLatencyTracker.computeNextAverage: below threshold latencies
// the average is -1 (unknown); the first counted latency is the average;
// after that the new average is (1-w) x latency + w x previous with
// w = ln(d+1)/d, d the time since the previous latency over scale, so a
// latency after a long silence weighs almost fully. A latency recorded at
// the same instant as the previous one is discarded, as in the source
// (its delay is not positive).
func (a *tsAverage) add(now, latency time.Duration, scale float64, threshold int64) {
	n := int64(1)
	if a.set {
		n = a.n + 1
	}
	if n < threshold {
		*a = tsAverage{set: true, timestamp: now, average: -1, n: n}
		return
	}
	if !a.set || a.average < 0 {
		*a = tsAverage{set: true, timestamp: now, average: int64(latency), n: n}
		return
	}
	delay := now - a.timestamp
	if delay <= 0 {
		return
	}
	scaled := float64(delay) / scale
	w := math.Log(scaled+1) / scaled
	*a = tsAverage{set: true, timestamp: now, average: int64((1-w)*float64(latency) + w*float64(a.average)), n: n}
}

// grow returns hosts long enough to hold index s (the zero T for new
// hosts); it allocates only when a new, higher index appears.
func grow[T any](hosts []T, s int32) []T {
	if int(s) < len(hosts) {
		return hosts
	}
	return append(hosts, make([]T, int(s)+1-len(hosts))...)
}

// shuffle is the Java drivers' ArrayUtils.shuffleHead (Fisher-Yates from
// the end) over all of r, with the selector's own randomness.
func shuffle(rng *rand.Rand, r []int32) {
	for i := len(r) - 1; i > 0; i-- {
		j := rng.IntN(i + 1)
		r[i], r[j] = r[j], r[i]
	}
}

// moveToFront moves r[i] to the front, the others keeping their order.
func moveToFront(r []int32, i int) {
	v := r[i]
	copy(r[1:i+1], r[:i])
	r[0] = v
}

// moveToBack moves r[i] to the end, the others keeping their order (the
// Java drivers' ArrayUtils.bubbleDown to the last index).
func moveToBack(r []int32, i int) {
	v := r[i]
	copy(r[i:], r[i+1:])
	r[len(r)-1] = v
}

// javaLatencies is what the two autodeskcloud policies share: the
// NodeLatencyTracker of each host (threshold 100 latencies, scale 100 ms),
// recorded on every response and error (onNodeSuccess, onNodeError), and
// the shuffle of the replicas.
type javaLatencies struct {
	rng   *rand.Rand
	retry time.Duration // the policy's RETRY_PERIOD
	hosts []tsAverage
}

// NodeLatencyTracker's constants.
const (
	autodeskThreshold = 100
	autodeskScale     = float64(100 * time.Millisecond)
)

func (l *javaLatencies) record(now time.Duration, s int32, rtt time.Duration) {
	l.hosts = grow(l.hosts, s)
	l.hosts[s].add(now, rtt, autodeskScale, autodeskThreshold)
}

// swapSlower is compareAndSwapSlowReplica: r[i] and r[j] swap when both
// have an average, r[i]'s is higher and r[i]'s was updated less than the
// retry period ago. An average is -1 until 100 latencies, so a host with
// one moves behind a host still without (as in the source).
func (l *javaLatencies) swapSlower(now time.Duration, r []int32, i, j int) {
	if int(r[i]) >= len(l.hosts) || int(r[j]) >= len(l.hosts) {
		return
	}
	a, b := &l.hosts[r[i]], &l.hosts[r[j]]
	if a.set && b.set && a.average > b.average && now-a.timestamp < l.retry {
		r[i], r[j] = r[j], r[i]
	}
}
