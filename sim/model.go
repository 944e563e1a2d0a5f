package sim

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"
)

// ServiceModel is the per-node service-time model of the C3 paper's
// simulation (section 6): a FIFO queue served by W workers with exponential
// service times, plus slowdowns, bimodal fluctuation, pauses and errors.
// Only data requests (non-system tables) go through it; system and schema
// queries are answered at once.
type ServiceModel struct {
	Workers             int           // W, parallel workers per node; default 4 (1..1024)
	MeanService         time.Duration // 1/mu, mean of the exponential service time; default 4ms; 0 only with ZeroService
	ZeroService         bool          // serve with no artificial delay (throughput benchmarks)
	Slowdown            float64       // multiplies every service time; default 1 (must be > 0)
	FluctuationInterval time.Duration // T; 0 = off. Every T the node independently serves at mu or mu/D (p = 1/2 each)
	FluctuationD        float64       // D, the slow-phase divisor of the rate; default 3 (>= 1)
	PauseEvery          time.Duration // period of stop-the-world pauses; 0 = off
	PauseFor            time.Duration // length of each periodic pause (< PauseEvery)
	ErrorRate           float64       // probability (0..1) that a data request gets InjectedError
	InjectedError       string        // "overloaded" (default) | "unavailable" | "read_timeout"
}

// DefaultModel returns the default ServiceModel (W=4, 1/mu=4ms, no faults).
func DefaultModel() ServiceModel {
	return ServiceModel{Workers: 4, MeanService: 4 * time.Millisecond, Slowdown: 1, FluctuationD: 3}
}

// withDefaults fills zero fields with their defaults.
func (m ServiceModel) withDefaults() ServiceModel {
	if m.Workers == 0 {
		m.Workers = 4
	}
	if m.MeanService == 0 && !m.ZeroService {
		m.MeanService = 4 * time.Millisecond
	}
	if m.Slowdown == 0 {
		m.Slowdown = 1
	}
	if m.FluctuationD == 0 {
		m.FluctuationD = 3
	}
	if m.ErrorRate > 0 && m.InjectedError == "" {
		m.InjectedError = "overloaded"
	}
	return m
}

// Validate checks every field and names the first bad one, its value and
// the allowed range.
func (m ServiceModel) Validate() error {
	switch {
	case m.Workers < 1 || m.Workers > 1024:
		return fmt.Errorf("sim: ServiceModel.Workers = %d, allowed 1..1024", m.Workers)
	case m.MeanService < 0:
		return fmt.Errorf("sim: ServiceModel.MeanService = %v, must be >= 0", m.MeanService)
	case m.MeanService == 0 && !m.ZeroService:
		return fmt.Errorf("sim: ServiceModel.MeanService = 0 is allowed only with ZeroService = true")
	case m.MeanService > time.Minute:
		return fmt.Errorf("sim: ServiceModel.MeanService = %v, allowed up to 1m", m.MeanService)
	case !(m.Slowdown > 0) || math.IsInf(m.Slowdown, 0) || m.Slowdown > 1e6:
		return fmt.Errorf("sim: ServiceModel.Slowdown = %v, allowed (0, 1e6]", m.Slowdown)
	case m.FluctuationInterval < 0:
		return fmt.Errorf("sim: ServiceModel.FluctuationInterval = %v, must be >= 0 (0 = off)", m.FluctuationInterval)
	case !(m.FluctuationD >= 1) || m.FluctuationD > 1e6:
		return fmt.Errorf("sim: ServiceModel.FluctuationD = %v, allowed [1, 1e6]", m.FluctuationD)
	case m.PauseEvery < 0 || m.PauseFor < 0:
		return fmt.Errorf("sim: ServiceModel.PauseEvery = %v / PauseFor = %v, must be >= 0", m.PauseEvery, m.PauseFor)
	case m.PauseFor > 0 && m.PauseEvery == 0:
		return fmt.Errorf("sim: ServiceModel.PauseFor = %v needs PauseEvery > 0", m.PauseFor)
	case m.PauseEvery > 0 && m.PauseFor >= m.PauseEvery:
		return fmt.Errorf("sim: ServiceModel.PauseFor = %v, must be < PauseEvery (%v)", m.PauseFor, m.PauseEvery)
	case !(m.ErrorRate >= 0 && m.ErrorRate <= 1):
		return fmt.Errorf("sim: ServiceModel.ErrorRate = %v, allowed [0, 1]", m.ErrorRate)
	}
	switch m.InjectedError {
	case "", "overloaded", "unavailable", "read_timeout":
	default:
		return fmt.Errorf("sim: ServiceModel.InjectedError = %q, allowed \"overloaded\", \"unavailable\", \"read_timeout\"", m.InjectedError)
	}
	return nil
}

// modelState is a ServiceModel in force since base (the phase origin of
// periodic pauses and fluctuation epochs).
type modelState struct {
	ServiceModel
	base time.Time
	seed uint64
}

// slowPhase reports whether the node is in the slow (mu/D) phase at now.
func (s *modelState) slowPhase(now time.Time) bool {
	if s.FluctuationInterval <= 0 || s.FluctuationD == 1 {
		return false
	}
	epoch := uint64(now.Sub(s.base) / s.FluctuationInterval)
	return splitmix(s.seed^(epoch*0x9e3779b97f4a7c15))&1 == 1
}

// meanService returns the effective mean service time at now (1/mu including
// slowdown and fluctuation).
func (s *modelState) meanService(now time.Time) time.Duration {
	if s.ZeroService {
		return 0
	}
	f := s.Slowdown
	if s.slowPhase(now) {
		f *= s.FluctuationD
	}
	return time.Duration(float64(s.MeanService) * f)
}

// periodicPauseEnd returns the end of the periodic pause covering now, or
// the zero time when not paused. Pauses occupy the last PauseFor of every
// PauseEvery period counted from base.
func (s *modelState) periodicPauseEnd(now time.Time) time.Time {
	if s.PauseEvery <= 0 || s.PauseFor <= 0 {
		return time.Time{}
	}
	el := now.Sub(s.base)
	if el < 0 {
		return time.Time{}
	}
	off := el % s.PauseEvery
	if off >= s.PauseEvery-s.PauseFor {
		return now.Add(s.PauseEvery - off)
	}
	return time.Time{}
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// rng is a small per-worker xorshift generator (no locking, no allocation).
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s ^= r.s << 13
	r.s ^= r.s >> 7
	r.s ^= r.s << 17
	return r.s
}

// float returns a uniform value in (0, 1).
func (r *rng) float() float64 {
	return (float64(r.next()>>11) + 0.5) / (1 << 53)
}

func (r *rng) exp() float64 { return -math.Log(r.float()) }

// windowWidth is the width of a Stats.Windows bucket.
const windowWidth = 100 * time.Millisecond

const chunkLen = 1024

// windowCounter counts events per 100 ms window since start, lock-free.
type windowCounter struct {
	start  time.Time
	chunks [8192]atomic.Pointer[[chunkLen]atomic.Uint64] // ~9.7 days of windows
}

func (w *windowCounter) inc(now time.Time) {
	i := int(now.Sub(w.start) / windowWidth)
	if i < 0 {
		i = 0
	}
	c := i / chunkLen
	if c >= len(w.chunks) {
		return
	}
	p := w.chunks[c].Load()
	if p == nil {
		w.chunks[c].CompareAndSwap(nil, new([chunkLen]atomic.Uint64))
		p = w.chunks[c].Load()
	}
	p[i%chunkLen].Add(1)
}

// snapshot returns the counts of every window up to and including now's.
func (w *windowCounter) snapshot(now time.Time) []uint64 {
	n := int(now.Sub(w.start)/windowWidth) + 1
	if n > len(w.chunks)*chunkLen {
		n = len(w.chunks) * chunkLen
	}
	out := make([]uint64, n)
	for i := range out {
		if p := w.chunks[i/chunkLen].Load(); p != nil {
			out[i] = p[i%chunkLen].Load()
		}
	}
	return out
}
