package core

// C3Score is the C3 replica score (section 3.1), with the queue drained by
// the server's workers:
//
//	Psi_s = R_s - 1/mu_s + qeff_s^3 / mu_s
//	qhat_s = 1 + os_s*w + q_s,   qeff_s = 1 + (qhat_s - 1) / W_s
//
// responseTime is R_s and serviceTime is 1/mu_s (same unit, e.g. ns),
// queueSize is q_s, inFlight is os_s, w is the concurrency-compensation
// weight (the paper sets it to the number of clients) and workers is W_s,
// the requests the server serves at once (Cassandra: the read stage's
// active_tasks_limit in system_views.thread_pools, concurrent_reads).
// Lower is better.
//
// The paper's servers are single queues: a request waits for the qhat_s - 1
// requests ahead of it, one service time each, then takes its own. W_s
// workers drain the queue ahead W_s times as fast, so qeff_s counts that
// wait in service times of the stage as a whole; a request still takes its
// own full service time. The estimate stays pessimistic (every worker is
// assumed busy, as os_s*w already assumes other clients' requests), so each
// request in flight still costs something and spreads a client's requests
// (herd protection), but a fast server with a few requests in flight no
// longer loses to an idle one several times slower. workers <= 1 is the
// paper's score (qeff_s = qhat_s).
func C3Score(responseTime, serviceTime, queueSize float64, inFlight int64, w, workers float64) float64 {
	q := qeff(queueSize, inFlight, w, workers)
	return responseTime - serviceTime + q*q*q*serviceTime
}

// ExpectedResponse is C3Score without the cube: R_s - 1/mu_s + qeff_s/mu_s,
// the time a request sent to the host now is expected to take (the queue
// ahead drained by W_s workers, then its own service time). The score
// cubes qeff_s to repel herds; a hedging rule comparing a host's wait with
// a time needs the linear estimate.
func ExpectedResponse(responseTime, serviceTime, queueSize float64, inFlight int64, w, workers float64) float64 {
	return responseTime - serviceTime + qeff(queueSize, inFlight, w, workers)*serviceTime
}

// qeff is qeff_s of C3Score.
func qeff(queueSize float64, inFlight int64, w, workers float64) float64 {
	q := 1 + float64(inFlight)*w + queueSize
	if workers > 1 {
		q = 1 + (q-1)/workers
	}
	return q
}

// Candidate is one host being ranked for a request.
type Candidate struct {
	Host     int32   // caller's handle
	Success  float32 // rolling success rate 0..1 (DemoteUnhealthy reads it); float32 keeps Candidate at 32 bytes
	Score    float64 // lower is better (C3: Psi_s adjusted by the caller)
	InFlight int64   // os_s (P2C compares these)
	Busy     bool    // DataStax busy-node condition (OrderP2C reads it)
	InRate   bool    // within its sending rate (Algorithm 1)
	Demoted  bool    // materially less healthy than the best (DemoteUnhealthy): ordered last
	tie      uint32
}

// Rand is a tiny splitmix64 generator: one seed per request yields all the
// random bits a ranking needs without touching a shared source.
type Rand uint64

// Next returns 64 random bits.
func (r *Rand) Next() uint64 {
	*r += 0x9e3779b97f4a7c15
	z := uint64(*r)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Float returns a uniform float64 in [0,1).
func (r *Rand) Float() float64 { return float64(r.Next()>>11) / (1 << 53) }

// Intn returns a uniform int in [0,n), n > 0.
func (r *Rand) Intn(n int) int { return int((r.Next() >> 32) * uint64(n) >> 32) }

// busyLast moves busy candidates behind the healthy ones (stable) when a
// strict majority is healthy, and returns the number of candidates eligible
// as first choice: the healthy prefix, or all when the rule does not apply
// (DataStax: if many replicas look busy, the signal probably does not fit the
// workload and is ignored).
func busyLast(c []Candidate) int {
	busy := 0
	for i := range c {
		if c[i].Busy {
			busy++
		}
	}
	healthy := len(c) - busy
	if busy == 0 || healthy*2 <= len(c) {
		return len(c)
	}
	// stable partition, at most 16 entries: insertion style
	k := 0
	for i := range c {
		if !c[i].Busy {
			x := c[i]
			copy(c[k+1:i+1], c[k:i])
			c[k] = x
			k++
		}
	}
	return healthy
}

func less(a, b *Candidate) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return a.tie < b.tie
}

func sortByScore(c []Candidate) {
	for i := 1; i < len(c); i++ {
		x := c[i]
		j := i
		for j > 0 && less(&x, &c[j-1]) {
			c[j] = c[j-1]
			j--
		}
		c[j] = x
	}
}

// OrderByScore orders candidates for C3: demoted hosts (DemoteUnhealthy)
// last, each group by ascending score. Exact ties are broken by a random
// key, so identical hosts get a spread of first picks. It returns the
// number of candidates eligible as first choice (those not demoted).
func OrderByScore(c []Candidate, r *Rand) int {
	for i := range c {
		c[i].tie = uint32(r.Next())
	}
	kept := demotedLast(c)
	sortByScore(c[:kept])
	sortByScore(c[kept:])
	return kept
}

// promote moves c[i] to the front, keeping the order of the others.
func promote(c []Candidate, i int) {
	if i <= 0 {
		return
	}
	x := c[i]
	copy(c[1:i+1], c[:i])
	c[0] = x
}

// PromoteInRate moves the first candidate within its sending rate among the
// first `eligible` to the front (Algorithm 1, lines 3-8) and reports whether
// one was found.
func PromoteInRate(c []Candidate, eligible int) bool {
	for i := 0; i < eligible && i < len(c); i++ {
		if c[i].InRate {
			promote(c, i)
			return true
		}
	}
	return false
}

// OrderP2C orders candidates as the DataStax drivers do: random order, busy
// hosts last while a majority is healthy, then of the first two eligible
// (two random choices) the one with fewer requests in flight goes first.
// Demoted hosts (DemoteUnhealthy) go behind all others first, so fast
// failures that keep a host's in-flight count low cannot win the two
// choices. It returns the number of candidates eligible as first choice.
func OrderP2C(c []Candidate, r *Rand) int {
	for i := len(c) - 1; i > 0; i-- {
		j := r.Intn(i + 1)
		c[i], c[j] = c[j], c[i]
	}
	kept := demotedLast(c)
	eligible := busyLast(c[:kept])
	if eligible >= 2 && c[1].InFlight < c[0].InFlight {
		c[0], c[1] = c[1], c[0]
	}
	return eligible
}

// OrderRoundRobin rotates candidates by counter: successive requests with the
// same replica set start at successive replicas.
func OrderRoundRobin(c []Candidate, counter uint64) {
	n := len(c)
	if n < 2 {
		return
	}
	k := int(counter % uint64(n))
	if k == 0 {
		return
	}
	var tmp [16]Candidate
	if n <= len(tmp) {
		copy(tmp[:n], c)
		for i := 0; i < n; i++ {
			c[i] = tmp[(i+k)%n]
		}
		return
	}
	for s := 0; s < n-k; s++ { // rare: more than 16 candidates; rotate right by n-k
		promote(c, n-1)
	}
}
