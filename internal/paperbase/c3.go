package paperbase

import (
	"math"
	"time"

	"github.com/tailroute/tailroute/internal/selector"
)

// C3Params are the C3 paper's replica-ranking parameters (§3.1) plus its
// rate control (§3.2); DefaultC3Params holds absim's published values.
type C3Params struct {
	// ConcurrencyWeight is the concurrency compensation's weight (n in
	// §3.1's Ψ_s, w in its q̂_s): q̂_s = 1 + os_s·n + q̄_s. 0 means
	// SelectorConfig.Clients, as absim's --concurrencyWeight default
	// (experiment.py:407-408) and the paper ("n is the number of
	// clients").
	ConcurrencyWeight float64
	// CostExponent is b in q̂_s^b/μ̄_s. absim: --costExponent 3.
	CostExponent float64
	// EWMAAlpha is the weight of the NEWEST sample in the EWMAs of the
	// piggybacked q_s, 1/μ_s and of R_s - 1/μ_s. absim: alpha = 0.9
	// (client.py:311-320); the first response sets them.
	EWMAAlpha float64
	// ServerSlots converts Feedback.Queue (waiting or in service) into
	// absim's piggybacked q_s, the requests still WAITING when the
	// response left (server.py:60, len(waitQ)): q_s = max(0, Queue -
	// ServerSlots). absim: --serverConcurrency 4. 0 uses Queue as is.
	ServerSlots int
	// Rate is the rate limiter and CUBIC adaptation (§3.2).
	Rate RateParams
}

// DefaultC3Params returns absim's values for the published runs.
func DefaultC3Params() C3Params {
	return C3Params{CostExponent: 3, EWMAAlpha: 0.9, ServerSlots: 4, Rate: DefaultRateParams()}
}

// c3ewma is a client's EWMA of one server's feedback, in ms / requests.
type c3ewma struct {
	seen bool
	nw   float64 // R_s - 1/μ_s: response time minus service time ("nw" in absim)
	q    float64 // q̄_s
	svc  float64 // 1/μ̄_s
}

// C3 is the paper's C3: cubic replica ranking with concurrency
// compensation over piggybacked feedback, per-server CUBIC rate limiting
// and backpressure (absim's "C3" / "expDelay" with --backpressure).
type C3 struct {
	p       C3Params
	n       float64
	pending []int     // os_s
	ewma    []c3ewma  // per server
	scores  []float64 // scratch, per position in replicas
	order   []int32   // scratch: replicas sorted by score
	rc      rateControl
}

// NewC3 returns the paper's C3 with absim's published parameters.
func NewC3(cfg selector.SelectorConfig) selector.Selector { return NewC3With(cfg, DefaultC3Params()) }

// NewC3With returns the paper's C3 with the given parameters.
func NewC3With(cfg selector.SelectorConfig, p C3Params) *C3 {
	servers := numServers(cfg)
	if p.CostExponent <= 0 || p.EWMAAlpha <= 0 || p.EWMAAlpha > 1 || p.ServerSlots < 0 || p.ConcurrencyWeight < 0 {
		panic("paperbase: invalid C3Params")
	}
	n := p.ConcurrencyWeight
	if n == 0 {
		n = float64(max(cfg.Clients, 1))
	}
	return &C3{
		p:       p,
		n:       n,
		pending: make([]int, servers),
		ewma:    make([]c3ewma, servers),
		scores:  make([]float64, servers),
		order:   make([]int32, servers),
		rc:      newRateControl(p.Rate, servers),
	}
}

// Score is Ψ_s = (R_s - 1/μ̄_s) + q̂_s^b/μ̄_s in ms, q̂_s = 1 + os_s·n + q̄_s
// (absim computeExpectedDelay, client.py:259-278); 0 for a server the
// client has no feedback from yet (absim: preferred).
func (c *C3) Score(s int32) float64 {
	e := &c.ewma[s]
	if !e.seen {
		return 0
	}
	qhat := 1 + float64(c.pending[s])*c.n + e.q
	var pow float64
	if c.p.CostExponent == 3 {
		pow = qhat * qhat * qhat
	} else {
		pow = math.Pow(qhat, c.p.CostExponent)
	}
	return e.nw + pow*e.svc
}

// Choose sorts the replicas by Score (stably: ties keep replicas' order,
// the group's ring order in absim) and returns the first within its rate,
// consuming its token; if none is, retryAfter is the shortest wait for a
// token (absim's BackpressureScheduler). replicas[0] keys the replica
// group's backlog, as in absim; replicas is not reordered.
func (c *C3) Choose(now time.Duration, replicas []int32) (int32, time.Duration) {
	if len(replicas) == 0 {
		return -1, 0
	}
	t := ms(now)
	c.rc.applyForce(replicas[0], t)
	if len(replicas) > len(c.order) {
		c.order = make([]int32, len(replicas))
		c.scores = make([]float64, len(replicas))
	}
	order, scores := c.order[:len(replicas)], c.scores[:len(replicas)]
	for i, s := range replicas { // stable insertion sort
		sc := c.Score(s)
		j := i
		for j > 0 && scores[j-1] > sc {
			scores[j], order[j] = scores[j-1], order[j-1]
			j--
		}
		scores[j], order[j] = sc, s
	}
	return c.rc.first(order, replicas[0], t)
}

// Sent counts an outstanding request; a send to a server other than the
// one Choose just returned (a read repair / shadow read) takes a token
// from its bucket without backpressure (absim's forceUpdates).
func (c *C3) Sent(_ time.Duration, s int32) {
	c.pending[s]++
	c.rc.sent(s)
}

// Done records the response: os_s--, the EWMAs of q_s, 1/μ_s and
// R_s - 1/μ_s, the receive rate, then the CUBIC rate update (absim's
// ResponseHandler.run, client.py:387-425).
func (c *C3) Done(now time.Duration, s int32, rtt time.Duration, fb selector.Feedback) {
	if c.pending[s] > 0 {
		c.pending[s]--
	}
	q := fb.Queue
	if c.p.ServerSlots > 0 {
		q = max(q-c.p.ServerSlots, 0)
	}
	svc := ms(fb.ServiceTime)
	nw := ms(rtt) - svc
	e := &c.ewma[s]
	if !e.seen {
		*e = c3ewma{seen: true, nw: nw, q: float64(q), svc: svc}
	} else {
		a := c.p.EWMAAlpha
		e.nw = a*nw + (1-a)*e.nw
		e.q = a*float64(q) + (1-a)*e.q
		e.svc = a*svc + (1-a)*e.svc
	}
	c.rc.done(s, now)
}

// Rate returns the client's sending rate (srate) for s, in requests per
// Interval (for tests and traces).
func (c *C3) Rate(s int32) float64 { return c.rc.lim[s].rate }

// Outstanding returns os_s.
func (c *C3) Outstanding(s int32) int { return c.pending[s] }

func numServers(cfg selector.SelectorConfig) int {
	if cfg.Env == nil || cfg.Env.Servers() <= 0 {
		panic("paperbase: SelectorConfig.Env with Servers() > 0 is required")
	}
	return cfg.Env.Servers()
}
