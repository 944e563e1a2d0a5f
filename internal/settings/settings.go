// Package settings holds what the options of package tailroute (the
// module's root package) write: the routing settings a policy adapter
// gives the engine (internal/route) and the hedging settings a hedging
// adapter gives internal/hedge. The options, their defaults and their
// allowed ranges are declared and documented once, in package tailroute;
// this package only carries the values.
package settings

import (
	"errors"
	"fmt"
	"time"

	"github.com/tailroute/tailroute/tracker"
)

// Route is the validated configuration of a policy (internal/route).
type Route struct {
	DriverSpec     bool
	Strategy       int // tailroute.Strategy
	LocalDC        string
	RemoteDCs      bool
	Weight         float64
	Workers        float64 // W_s of hosts whose workers are unknown
	BusyInFlight   int
	BusyNoResponse time.Duration
	StallFactor    float64
	StallMin       time.Duration
	RateControl    bool
	MaxWait        time.Duration
	ProbeAfter     time.Duration
	MaxCandidates  int
	HealthTol      float64
	Tracker        tracker.Config
	ServerLoad     bool          // server-load polling (C3 only)
	PollShare      float64       // polls per user request, at most
	PollMin        time.Duration // a host's shortest poll interval
	PollMax        time.Duration // a host's longest poll interval
	TailTerm       float64       // k
	LocalRack      string        // the client's rack (zone); "": none
	ZoneBound      float64       // how much longer the in-zone replica's expected response may be than the best's

	// Test and simulator hooks, set only by internal options.
	FeedbackQ, FeedbackST string                                       // payload keys read by RecordFeedback
	KeyspaceFunc          func(string) (string, map[string]any, error) // replaces the session's keyspace metadata
	Rand                  func() uint64                                // the engine's randomness; nil: math/rand/v2
	Spawn                 func(func())                                 // starts the engine's background work; nil: a goroutine
	Off                   uint32                                       // rules turned off for an ablation (track.Rule)
}

// Hedge is the validated configuration of a Hedger (internal/hedge).
type Hedge struct {
	Source interface {
		LatencyQuantile(float64) (time.Duration, bool)
	} // nil: a Recorder of the Hedger's own
	Quantile     float64
	MinDelay     time.Duration
	MaxDelay     time.Duration
	Refresh      time.Duration
	Fraction     float64
	Window       time.Duration
	ErrorHoldoff time.Duration
	BurstHorizon time.Duration
	BurstFactor  float64
	BurstFloor   int
	Clock        tracker.Clock
	LoadOn       bool // WithLoadRule
}

// Kind says what an option configures.
type Kind uint8

const (
	Routing Kind = 1 << iota // a policy (policy.New)
	Hedging                  // a Hedger (speculative.New)
)

// Set is what the options write: both configurations, the kinds the option
// being applied touched, its name, and the bad values found.
type Set struct {
	Route Route
	Hedge Hedge

	touched Kind
	name    string
	errs    [2][]error // by kind: Routing, Hedging
}

// Defaults returns the settings before any option. Package tailroute,
// which declares every default, sets it when it is initialised (every
// adapter imports tailroute, so it is set before any option is applied).
var Defaults func() Set

// Touch records that the option being applied is name and configures k.
func (s *Set) Touch(k Kind, name string) { s.touched |= k; s.name = name }

// Fail records a bad value of the option being applied, for the builds of
// kind k; prefix and text make the message ("policy: WithX: Field = v,
// allowed ...").
func (s *Set) Fail(k Kind, format string, a ...any) {
	for i, kk := range []Kind{Routing, Hedging} {
		if k&kk != 0 {
			s.errs[i] = append(s.errs[i], fmt.Errorf(prefix(kk)+format, a...))
		}
	}
}

func prefix(k Kind) string {
	if k == Hedging {
		return "speculative: "
	}
	return "policy: "
}

func other(k Kind) string {
	if k == Hedging {
		return "a routing option, for policy.New"
	}
	return "a hedging option, for speculative.New"
}

// Build applies opts, in order, to the defaults and returns the settings
// for kind k, or every bad value joined in one error. An option that does
// not configure k (a hedging option given to a policy) is an error too.
func Build[O ~func(*Set)](k Kind, opts []O) (Set, error) {
	s := Defaults()
	idx := 0
	if k == Hedging {
		idx = 1
	}
	for i, o := range opts {
		if o == nil {
			s.errs[idx] = append(s.errs[idx], fmt.Errorf(prefix(k)+"option %d = nil, want an Option", i))
			continue
		}
		s.touched, s.name = 0, ""
		o(&s)
		if s.touched&k == 0 {
			s.errs[idx] = append(s.errs[idx], fmt.Errorf(prefix(k)+"option %d (%s) is %s", i, s.name, other(k)))
		}
	}
	if err := errors.Join(s.errs[idx]...); err != nil {
		return Set{}, err
	}
	return s, nil
}

// Payload keys of the simulator's load feedback (sim Config.Feedback):
// queue length and service time in microseconds, each an 8-byte
// big-endian uint64. Read only by the simulator-side RecordFeedback.
const (
	DefaultFeedbackQueueKey       = "tailroute-q"
	DefaultFeedbackServiceTimeKey = "tailroute-st"
)
