package peers

import (
	"slices"
	"testing"
	"time"

	"github.com/tailroute/tailroute/internal/selector"
)

// sixInThree is the zone cells' cluster: servers 0..5 in rack (s mod 3)+1
// of dc1, and server 6 in dc2.
type sixInThree struct{}

func (sixInThree) Oracle(int32) (int, time.Duration) { return 0, 0 }
func (sixInThree) Servers() int                      { return 7 }

func sixInThreePlace(s int32) (string, string) {
	if s == 6 {
		return "dc2", "rack1"
	}
	return "dc1", []string{"rack1", "rack2", "rack3"}[s%3]
}

// TestRackAwareOrder: gocql v1.7.0's plan, computed by hand. Tiers: 0 =
// {0, 3} (rack1), 1 = {1, 2, 4, 5} (dc1, other racks), 2 = {6}. The key's
// replicas in ring order [4, 5, 0, 6]: the token-aware part returns 0 (its
// only tier-0 replica, not shuffled); then rackAwareRR.Pick with
// lastUsedHostIdx 1 visits tier 0 from (1+1) mod 2 (0: used, 3: not a
// replica), tier 1 from (1+1) mod 4 = position 2 (server 4), then 5, 1, 2,
// then tier 2 (6): the plan's replicas are [0, 4, 5, 6]. The next plan
// (counter 2) starts tier 1 at position 3: [0, 5, 4, 6]; the third
// (counter 3) at position 0 (server 1), so 4 then 5 again: [0, 4, 5, 6].
// Choose takes the tier-0 replica without touching the counter; with no
// tier-0 replica (replicas [1, 2, 4]) it counts a fallback Pick (counter
// 4: from position 1, server 2, then 4 and 1): 2.
func TestRackAwareOrder(t *testing.T) {
	p := NewRackAware(selector.SelectorConfig{Env: sixInThree{}, LocalDC: "dc1", LocalRack: "rack1", Place: sixInThreePlace})
	for i, want := range [][]int32{{0, 4, 5, 6}, {0, 5, 4, 6}, {0, 4, 5, 6}} {
		r := []int32{4, 5, 0, 6}
		if p.Order(0, r); !slices.Equal(r, want) {
			t.Errorf("plan %d: %v, want %v", i+1, r, want)
		}
	}
	if s, _ := p.Choose(0, []int32{5, 3, 1}); s != 3 {
		t.Errorf("Choose: %d, want the tier-0 replica 3", s)
	}
	if s, _ := p.Choose(0, []int32{1, 2, 4}); s != 2 {
		t.Errorf("Choose without a tier-0 replica: %d, want 2 (the fallback at counter 4)", s)
	}
	if got := []int{p.Tier(0), p.Tier(1), p.Tier(5), p.Tier(6)}; !slices.Equal(got, []int{0, 1, 1, 2}) {
		t.Errorf("tiers %v, want [0 1 1 2]", got)
	}
}
