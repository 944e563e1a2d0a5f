package peers

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/tailroute/tailroute/internal/selector"
)

// PeakEWMASettings are Peak-EWMA's parameters.
type PeakEWMASettings struct {
	// DefaultRTT is a new host's estimate (tower takes it as a parameter;
	// 30 ms in tower's balance example, tower/examples/tower-balance.rs,
	// and Linkerd's default).
	DefaultRTT time.Duration
	// Decay is the time constant of the estimate's decay (10 s, Finagle's
	// Balancers.p2cPeakEwma default and tower's example).
	Decay time.Duration
}

// DefaultPeakEWMASettings returns default RTT 30 ms, decay 10 s.
func DefaultPeakEWMASettings() PeakEWMASettings {
	return PeakEWMASettings{DefaultRTT: 30 * time.Millisecond, Decay: 10 * time.Second}
}

// PeakEWMA is a port of Peak-EWMA load with power of two choices over a
// query's replicas, from Rust's tower, github.com/tower-rs/tower master at
// 8358ee712c4050650737e361fba242aa8c798ce2 (tower 0.5.3+5):
// tower/src/load/peak_ewma.rs (PeakEwma, RttEstimate) and
// tower/src/balance/p2c/service.rs (p2c_ready_index), itself derived from
// Finagle, github.com/twitter/finagle develop at
// 4feb34cb949918c572a6152327212e062527bd62 (24.5.0+16):
// finagle-core/src/main/scala/com/twitter/finagle/loadbalancer/PeakEwma.scala,
// p2c/P2CPick.scala, util/Ema.scala, Balancers.scala (p2cPeakEwma).
//
// The rule: each host has an RTT estimate, a new host's DefaultRTT. A
// response with rtt above the estimate sets the estimate to rtt (the peak);
// one below moves it toward rtt by 1 - e^(-elapsed/Decay), elapsed the time
// since the estimate's last update. Reading a host's load first decays the
// estimate toward 0 the same way (tower's load() updates it with a zero
// RTT, as Finagle's get() does), then load = estimate x (pending + 1),
// pending the host's requests sent and not answered. Choose draws two
// distinct replicas at random and takes the one with the lower load (the
// first drawn on a tie); a single replica is taken as is.
//
// Differences from the sources:
//
//   - tower balances over ready services and picks one; Order puts the
//     chosen replica first and keeps the others in their given order (the
//     driver adapters then add the rest of the token-aware plan).
//   - Randomness from SelectorConfig.Rand (Finagle's two distinct draws;
//     tower's sample_floyd2 draws the same distribution).
//   - Finagle has no default RTT: a host without history and with pending
//     requests costs a penalty (Long.MaxValue >> 16 + pending); tower's
//     default RTT is the rule ported. Finagle also counts pending from
//     connection acquisition to the service's close; tower, ported, from
//     the call to the response (Sent to Done).
//   - Reset forgets the host, as tower's discovery removing a service does
//     (it comes back with DefaultRTT); the drivers' adapters call it when a
//     host goes down or is removed.
type PeakEWMA struct {
	defaultRTT float64 // ns
	decay      float64 // ns
	rng        *rand.Rand
	hosts      []ewmaHost
}

// ewmaHost is one host's RttEstimate and pending count.
type ewmaHost struct {
	seen     bool
	rtt      float64 // ns
	updateAt time.Duration
	pending  int
}

// NewPeakEWMA returns the policy with default RTT 30 ms and decay 10 s;
// cfg.Rand draws the two choices.
func NewPeakEWMA(cfg selector.SelectorConfig) *PeakEWMA {
	return NewPeakEWMAWith(cfg, DefaultPeakEWMASettings())
}

// NewPeakEWMAWith returns the policy with settings s.
func NewPeakEWMAWith(cfg selector.SelectorConfig, s PeakEWMASettings) *PeakEWMA {
	return &PeakEWMA{defaultRTT: float64(s.DefaultRTT), decay: float64(s.Decay), rng: cfg.Rand}
}

// host returns server s's state, new at now with the default RTT.
func (p *PeakEWMA) host(now time.Duration, s int32) *ewmaHost {
	p.hosts = grow(p.hosts, s)
	h := &p.hosts[s]
	if !h.seen {
		*h = ewmaHost{seen: true, rtt: p.defaultRTT, updateAt: now}
	}
	return h
}

// update is RttEstimate::update with an observed rtt (ns) at now.
func (h *ewmaHost) update(now time.Duration, rtt, decay float64) {
	if h.rtt < rtt {
		h.rtt = rtt
	} else {
		elapsed := float64(max(now-h.updateAt, 0))
		d := math.Exp(-elapsed / decay)
		h.rtt = h.rtt*d + rtt*(1-d)
	}
	h.updateAt = max(h.updateAt, now)
}

// Load is server s's cost at now, tower's PeakEwma::load: the estimate
// decayed to now (which updates it) x (pending + 1).
func (p *PeakEWMA) Load(now time.Duration, s int32) float64 {
	h := p.host(now, s)
	h.update(now, 0, p.decay)
	return h.rtt * float64(h.pending+1)
}

// pick is the index in replicas of the power-of-two-choices winner.
func (p *PeakEWMA) pick(now time.Duration, replicas []int32) int {
	n := len(replicas)
	if n < 2 {
		return 0
	}
	a := p.rng.IntN(n)
	b := p.rng.IntN(n - 1)
	if b >= a {
		b++
	}
	if p.Load(now, replicas[a]) <= p.Load(now, replicas[b]) {
		return a
	}
	return b
}

// Order moves the chosen replica to the front; the others keep their
// order. It returns len(replicas) (no host is excluded).
func (p *PeakEWMA) Order(now time.Duration, replicas []int32) int {
	if len(replicas) > 0 {
		moveToFront(replicas, p.pick(now, replicas))
	}
	return len(replicas)
}

// Choose returns the power-of-two-choices winner among replicas.
func (p *PeakEWMA) Choose(now time.Duration, replicas []int32) (int32, time.Duration) {
	return replicas[p.pick(now, replicas)], 0
}

// Sent counts one request pending on server s.
func (p *PeakEWMA) Sent(now time.Duration, s int32) { p.host(now, s).pending++ }

// Done ends one pending request of server s and updates its estimate with
// rtt.
func (p *PeakEWMA) Done(now time.Duration, s int32, rtt time.Duration, _ selector.Feedback) {
	h := p.host(now, s)
	if h.pending > 0 {
		h.pending--
	}
	h.update(now, float64(rtt), p.decay)
}

// Reset forgets server s (see the type's comment).
func (p *PeakEWMA) Reset(_ time.Duration, s int32) {
	if int(s) < len(p.hosts) {
		p.hosts[s] = ewmaHost{}
	}
}
