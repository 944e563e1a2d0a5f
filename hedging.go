package tailroute

import (
	"time"

	"github.com/tailroute/tailroute/internal/settings"
)

// LatencySource supplies the recent latency distribution the hedge delay
// follows. The policies of both adapters implement it, and so do the
// speculative packages' Recorder.
type LatencySource interface {
	// LatencyQuantile returns the q-quantile (0 < q <= 1) of recent
	// latencies; false when there are too few samples.
	LatencyQuantile(q float64) (time.Duration, bool)
}

// SilenceSource is a LatencySource that also reports how long the most
// silent host has owed a response. The burst
// cap (WithBurstCap) needs it to tell a stall from a slow phase; the
// policies of both adapters implement it.
type SilenceSource interface {
	LatencySource
	// MaxSilence returns the longest time a host with attempts in flight
	// has gone without answering; 0 when no host has one in flight.
	MaxSilence() time.Duration
}

// LoadSource is a SilenceSource that also reports the load a hedge would
// meet (Room); the policies of both adapters implement it. With one (WithSource(p))
// the Hedger applies the load rule (WithLoadRule; the speculative package
// doc, "Load rule").
type LoadSource interface {
	SilenceSource
	// HedgeRoom returns the load a hedge would meet now.
	HedgeRoom() Room
}

// Room is the load a hedge would meet, as a LoadSource reads it from the
// hosts (W_s is a host's worker count, polled with WithServerLoad).
type Room struct {
	// Wait is the expected response time of the host a hedge would go to.
	Wait time.Duration
	// Busy is the share of its workers the median host has taken, a host
	// whose W_s is unknown counting as fully taken (1).
	Busy float64
	// BusyAssumed says some host's W_s is unknown, so Busy is partly an
	// assumption rather than a reading: the load rule acts on it at once
	// but leaves it out of its average over time.
	BusyAssumed bool
	// Saturated says every host has a known W_s and all its workers taken.
	Saturated bool
	// StalledFor is how long the longest-silent host that the policy's
	// stall rule (WithStall) calls stalled has owed responses without
	// giving one; 0 when no host is stalled. The rule scales with the
	// host's own response time: a host whose answers come late because of
	// its queue is not stalled.
	StalledFor time.Duration
	// OneOfMany says the client is one of many sharing the hosts: its
	// concurrency weight in force (C3's number of clients, measured from
	// the polls or WithConcurrencyWeight) is at least 32, the bound of the
	// policy's own rules for such a client. It hears each host a few
	// times a second, and a hedge that wins cancels the slowest of those
	// answers (the driver drops the loser's late answer), so the hosts'
	// slowness would be hidden from the ranking: the load rule arms no
	// execution (Hedging.ManyClients).
	OneOfMany bool
}

// hedging returns a hedging option named name.
func hedging(name string, f func(s *settings.Set)) Option {
	return func(s *settings.Set) { s.Touch(settings.Hedging, name); f(s) }
}

// WithSource sets the latency source the hedge delay follows, e.g. the
// policy (WithSource(p)), which also lets the burst cap tell a stall from
// a slow phase. Default: a Recorder the Hedger owns, which Wire installs as
// the cluster's QueryObserver.
func WithSource(src LatencySource) Option {
	return hedging("WithSource", func(s *settings.Set) {
		if settings.IsNil(src) {
			s.Fail(settings.Hedging, "WithSource: Source = %T(nil), want a non-nil LatencySource", src)
			return
		}
		s.Hedge.Source = src
	})
}

// WithQuantile sets which latency quantile the hedge delay follows; default
// 0.95 (p95). Allowed (0, 1).
func WithQuantile(q float64) Option {
	return hedging("WithQuantile", func(s *settings.Set) {
		if !(q > 0 && q < 1) {
			s.Fail(settings.Hedging, "WithQuantile: Quantile = %v, allowed (0, 1) exclusive", q)
			return
		}
		s.Hedge.Quantile = q
	})
}

// WithDelayBounds clamps the hedge delay to [min, max]; default 1ms and
// 500ms. While the source has no estimate the delay is max. Allowed
// 1µs <= min <= max <= 1h.
func WithDelayBounds(min, max time.Duration) Option {
	return hedging("WithDelayBounds", func(s *settings.Set) {
		if min < time.Microsecond || min > time.Hour {
			s.Fail(settings.Hedging, "WithDelayBounds: MinDelay = %v, allowed 1µs..1h", min)
			return
		}
		if max < min || max > time.Hour {
			s.Fail(settings.Hedging, "WithDelayBounds: MaxDelay = %v, allowed MinDelay (%v)..1h", max, min)
			return
		}
		s.Hedge.MinDelay, s.Hedge.MaxDelay = min, max
	})
}

// WithRefreshInterval sets how often the hedge delay is recomputed from the
// source; default 100ms. Allowed 1ms..1h.
func WithRefreshInterval(d time.Duration) Option {
	return hedging("WithRefreshInterval", func(s *settings.Set) {
		if d < time.Millisecond || d > time.Hour {
			s.Fail(settings.Hedging, "WithRefreshInterval: RefreshInterval = %v, allowed 1ms..1h", d)
			return
		}
		s.Hedge.Refresh = d
	})
}

// WithBudget caps hedges to fraction of the requests seen over a sliding
// window; default 0.05 and 10s (at most 5% of the requests of any 10s get a
// hedge). Allowed fraction [0, 1] (0 = never hedge), window 20ms..24h.
func WithBudget(fraction float64, window time.Duration) Option {
	return hedging("WithBudget", func(s *settings.Set) {
		if !(fraction >= 0 && fraction <= 1) {
			s.Fail(settings.Hedging, "WithBudget: BudgetFraction = %v, allowed [0, 1]", fraction)
			return
		}
		if window < 20*time.Millisecond || window > 24*time.Hour {
			s.Fail(settings.Hedging, "WithBudget: BudgetWindow = %v, allowed 20ms..24h", window)
			return
		}
		s.Hedge.Fraction, s.Hedge.Window = fraction, window
	})
}

// WithErrorHoldoff makes hedges skip hosts that returned an error (timeout,
// overload, connection error...) within d, so a hedge is not sent to a host
// likely to answer with a fast error that would win the race; default 1s,
// 0 turns it off. Allowed 0..1h. If every remaining host failed recently,
// the hedge goes to the first of them rather than nowhere.
func WithErrorHoldoff(d time.Duration) Option {
	return hedging("WithErrorHoldoff", func(s *settings.Set) {
		if d < 0 || d > time.Hour {
			s.Fail(settings.Hedging, "WithErrorHoldoff: ErrorHoldoff = %v, allowed 0..1h", d)
			return
		}
		s.Hedge.ErrorHoldoff = d
	})
}

// WithBurstCap sets the burst cap: an execution is armed only while the
// hedges that fired within the last horizon number fewer than
// max(floor, factor x BudgetFraction x the executions seen within it).
// Executions already armed still hedge when their delay passes (the driver
// cannot decline a hedge then). It comes on top of the long-run budget
// (WithBudget), which keeps the long-run share. While a host is stalled
// (it has attempts in flight and has been silent for longer than the
// hedge delay) the cap is lifted. Telling a stall from a slow phase needs
// a source that reports silence (a SilenceSource: WithSource(p) with p a
// policy); with any other source, the built-in Recorder included, the cap
// is off. Default 200ms, 3 and 2; horizon 0 turns the cap off. Allowed
// horizon 0 or 10ms..1min, factor 1..100, floor 0..1000000.
func WithBurstCap(horizon time.Duration, factor float64, floor int) Option {
	return hedging("WithBurstCap", func(s *settings.Set) {
		switch {
		case horizon != 0 && (horizon < 10*time.Millisecond || horizon > time.Minute):
			s.Fail(settings.Hedging, "WithBurstCap: BurstHorizon = %v, allowed 0 (off) or 10ms..1min", horizon)
		case !(factor >= 1 && factor <= 100):
			s.Fail(settings.Hedging, "WithBurstCap: BurstFactor = %v, allowed 1..100", factor)
		case floor < 0 || floor > 1_000_000:
			s.Fail(settings.Hedging, "WithBurstCap: BurstFloor = %d, allowed 0..1000000", floor)
		default:
			s.Hedge.BurstHorizon, s.Hedge.BurstFactor, s.Hedge.BurstFloor = horizon, factor, floor
		}
	})
}

// WithLoadRule turns the load rule on or off (the speculative package doc,
// "Load rule"): where the hosts have no room for a hedge, an armed
// execution's hedge is deferred to a multiple of the delay instead of
// firing at the delay, and a client that is one of many (Room.OneOfMany)
// does not hedge; default true. It applies when the source is a
// LoadSource (WithSource(p), p a policy); with any other source every hedge
// fires at the delay.
func WithLoadRule(on bool) Option {
	return hedging("WithLoadRule", func(s *settings.Set) { s.Hedge.LoadOn = on })
}
