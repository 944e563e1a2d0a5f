package tailroute

import (
	"fmt"
	"strings"
)

// Strategy selects how a policy ranks the replicas of a request.
type Strategy int

const (
	// C3 ranks replicas by the C3 score plus the tail term (see "The C3
	// score" in the package doc), materially less healthy replicas last
	// (WithHealthTolerance), busy hosts last (WithBusy) and CUBIC rate
	// control with bounded backpressure (WithRateControl). The default.
	C3 Strategy = iota
	// P2C is the DataStax drivers' power of two random choices on in-flight
	// counts, with materially less healthy replicas and busy hosts last. No
	// rate control.
	P2C
	// RoundRobin rotates through the replicas; the baseline. No busy rule, no
	// health rule, no rate control.
	RoundRobin
)

// String returns the name ParseStrategy accepts: "c3", "p2c" or
// "roundrobin" ("Strategy(n)" for an unknown value).
func (s Strategy) String() string {
	switch s {
	case C3:
		return "c3"
	case P2C:
		return "p2c"
	case RoundRobin:
		return "roundrobin"
	}
	return fmt.Sprintf("Strategy(%d)", int(s))
}

// ParseStrategy parses "c3", "p2c" or "roundrobin" (also "round-robin" and
// "rr"), case-insensitive.
func ParseStrategy(s string) (Strategy, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "c3":
		return C3, nil
	case "p2c":
		return P2C, nil
	case "roundrobin", "round-robin", "rr":
		return RoundRobin, nil
	}
	return 0, fmt.Errorf("policy: strategy %q, allowed c3, p2c, roundrobin", s)
}
