package policy

import (
	"testing"

	"github.com/tailroute/tailroute"
)

// TestStrategyRoundTrip pins the adapter's Strategy to the routing engine's:
// each constant's String parses back to itself, WithStrategy accepts it and
// the Policy reports it.
func TestStrategyRoundTrip(t *testing.T) {
	want := map[tailroute.Strategy]string{tailroute.C3: "c3", tailroute.P2C: "p2c", tailroute.RoundRobin: "roundrobin"}
	for s, name := range want {
		if s.String() != name {
			t.Errorf("%d.String() = %q, want %q", int(s), s.String(), name)
		}
		got, err := tailroute.ParseStrategy(name)
		if err != nil || got != s {
			t.Errorf("ParseStrategy(%q) = %v, %v; want %v", name, got, err, s)
		}
		p, err := New(tailroute.WithStrategy(s))
		if err != nil {
			t.Fatalf("New(WithStrategy(%v)): %v", s, err)
		}
		if p.Strategy() != s {
			t.Errorf("Policy.Strategy() = %v, want %v", p.Strategy(), s)
		}
	}
	if got := tailroute.Strategy(7).String(); got != "Strategy(7)" {
		t.Errorf("Strategy(7).String() = %q", got)
	}
}
