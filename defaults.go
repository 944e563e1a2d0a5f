package tailroute

import (
	"time"

	"github.com/tailroute/tailroute/internal/settings"
	"github.com/tailroute/tailroute/tracker"
)

// Defaults of the routing options: what a policy does without the option.
// Every option's doc names its default; TestDocDefaults checks the docs
// against these constants.
const (
	DefaultStrategy            = C3
	DefaultRateControl         = true
	DefaultConcurrencyWeight   = 0.0 // w: measured from the polls (1 without them)
	DefaultServerWorkers       = 1   // W_s: the paper's single-queue server
	DefaultTailTerm            = 2.0 // k: a request's own service counted at 3/mu_s, the p95 of an exponential service time
	DefaultBusyInFlight        = 10
	DefaultBusyNoResponse      = 200 * time.Millisecond
	DefaultStallFactor         = 4.0
	DefaultStallMin            = 10 * time.Millisecond
	DefaultMaxBackpressureWait = time.Millisecond
	DefaultProbeAfter          = time.Second
	DefaultMaxCandidates       = 8
	DefaultHealthTolerance     = 0.05
	DefaultServerLoad          = true // C3 polls system_views.thread_pools
	// DefaultZoneBound is WithZoneBound's: the in-zone replica goes first
	// while its expected response is at most 1.5 times the best replica's.
	DefaultZoneBound = 1.5
	// DefaultPollShare, DefaultPollMinInterval and DefaultPollMaxInterval
	// are WithPollBudget's: polls are at most a tenth of the client's own
	// requests, and each host is polled every 100ms to 2s.
	DefaultPollShare       = 0.1
	DefaultPollMinInterval = 100 * time.Millisecond
	DefaultPollMaxInterval = 2 * time.Second
)

// Defaults of the hedging options: what a Hedger does without the option.
const (
	DefaultQuantile        = 0.95                   // hedge after the p95 (The Tail at Scale)
	DefaultMinDelay        = time.Millisecond       // about 2 network message delays (The Tail at Scale, tied requests)
	DefaultMaxDelay        = 500 * time.Millisecond // upper clamp; also the delay while no estimate exists
	DefaultRefreshInterval = 100 * time.Millisecond
	DefaultBudgetFraction  = 0.05 // at most 5% of requests get a hedge
	DefaultBudgetWindow    = 10 * time.Second
	DefaultErrorHoldoff    = time.Second
	// DefaultBurstHorizon is the short horizon over which hedges that
	// fired are capped (WithBurstCap).
	DefaultBurstHorizon = 200 * time.Millisecond
	// DefaultBurstFactor is how many times the budget fraction the hedges
	// of one horizon may reach: 3 lets ordinary hedging (about 70% of the
	// budget, see the budget-pressure controller) through and stops a slow
	// phase from spending seconds' worth of budget in one horizon.
	DefaultBurstFactor = 3.0
	// DefaultBurstFloor is how many hedges per horizon are always allowed,
	// whatever the request rate.
	DefaultBurstFloor = 2
	// DefaultLoadRule is whether the load rule defers hedges where the
	// hosts have no room for them (WithLoadRule).
	DefaultLoadRule = true
)

// Limits of the options' allowed ranges that are not plain literals.
const (
	maxTailTerm        = 100
	maxZoneBound       = 100
	maxCandidates      = 16
	minPollInterval    = 10 * time.Millisecond
	maxPollMinInterval = time.Minute
	maxPollMaxInterval = 10 * time.Minute
)

// defaults is every setting before any option.
func defaults() settings.Set {
	return settings.Set{
		Route: settings.Route{
			Strategy:       int(DefaultStrategy),
			Weight:         DefaultConcurrencyWeight,
			Workers:        DefaultServerWorkers,
			BusyInFlight:   DefaultBusyInFlight,
			BusyNoResponse: DefaultBusyNoResponse,
			StallFactor:    DefaultStallFactor,
			StallMin:       DefaultStallMin,
			RateControl:    DefaultRateControl,
			MaxWait:        DefaultMaxBackpressureWait,
			ProbeAfter:     DefaultProbeAfter,
			MaxCandidates:  DefaultMaxCandidates,
			HealthTol:      DefaultHealthTolerance,
			TailTerm:       DefaultTailTerm,
			ServerLoad:     DefaultServerLoad,
			ZoneBound:      DefaultZoneBound,
			PollShare:      DefaultPollShare,
			PollMin:        DefaultPollMinInterval,
			PollMax:        DefaultPollMaxInterval,
			FeedbackQ:      settings.DefaultFeedbackQueueKey,
			FeedbackST:     settings.DefaultFeedbackServiceTimeKey,
		},
		Hedge: settings.Hedge{
			Quantile:     DefaultQuantile,
			MinDelay:     DefaultMinDelay,
			MaxDelay:     DefaultMaxDelay,
			Refresh:      DefaultRefreshInterval,
			Fraction:     DefaultBudgetFraction,
			Window:       DefaultBudgetWindow,
			ErrorHoldoff: DefaultErrorHoldoff,
			BurstHorizon: DefaultBurstHorizon,
			BurstFactor:  DefaultBurstFactor,
			BurstFloor:   DefaultBurstFloor,
			LoadOn:       DefaultLoadRule,
			Clock:        tracker.SystemClock{},
		},
	}
}

func init() { settings.Defaults = defaults }
