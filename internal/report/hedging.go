package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/tailroute/tailroute"
)

// HedgeStats is what hedging did and cost in one policy's run phase, summed
// over its clients' hedgers (tailroute.Hedging): the load phase and the
// warm-up, which the same hedgers see, are left out.
type HedgeStats struct {
	Executions uint64 `json:"executions"`
	Armed      uint64 `json:"armed"`
	Fired      uint64 `json:"fired"`
	Won        uint64 `json:"won"`
	Lost       uint64 `json:"lost"`
	// Suppressed counts the eligible executions not armed, by reason
	// (tailroute.Hedging.Suppressed).
	Suppressed map[string]uint64 `json:"suppressed"`
	// Deferred counts the armed executions whose hedge the load rule
	// deferred, by reason (tailroute.Hedging.Deferred).
	Deferred map[string]uint64 `json:"deferred"`
	// ExtraPct is the hedges fired as a percentage of the executions: the
	// extra requests hedging sent.
	ExtraPct float64 `json:"extra_pct"`
}

// HedgeStatsOf sums the counters of a run's hedgers (one per client) over
// the run: each hedger's counters at its end (end[i]) minus those at its
// start (start[i]; nil start: from zero).
func HedgeStatsOf(start, end []tailroute.Hedging) *HedgeStats {
	var sum tailroute.Hedging
	for i, h := range end {
		var s tailroute.Hedging
		if start != nil {
			s = start[i]
		}
		sum.Executions += h.Executions - s.Executions
		sum.Armed += h.Armed - s.Armed
		sum.Hedges += h.Hedges - s.Hedges
		sum.Won += h.Won - s.Won
		sum.Lost += h.Lost - s.Lost
		sum.BudgetDenied += h.BudgetDenied - s.BudgetDenied
		sum.Losing += h.Losing - s.Losing
		sum.BurstDenied += h.BurstDenied - s.BurstDenied
		sum.Queueing += h.Queueing - s.Queueing
		sum.TargetSlow += h.TargetSlow - s.TargetSlow
		sum.TooFewHosts += h.TooFewHosts - s.TooFewHosts
		sum.ManyClients += h.ManyClients - s.ManyClients
	}
	out := &HedgeStats{Executions: sum.Executions, Armed: sum.Armed, Fired: sum.Hedges, Won: sum.Won, Lost: sum.Lost,
		Suppressed: map[string]uint64{}, Deferred: map[string]uint64{}, ExtraPct: sum.ExtraPct()}
	for _, r := range sum.Suppressed() {
		out.Suppressed[r.Reason] = r.N
	}
	for _, r := range sum.Deferred() {
		out.Deferred[r.Reason] = r.N
	}
	return out
}

// writeHedging prints one line per hedged policy: what hedging did and cost.
func (r *Report) writeHedging(w io.Writer) error {
	for _, res := range r.Results {
		h := res.HedgeStats
		if h == nil {
			continue
		}
		var sup, def []string
		for _, s := range (tailroute.Hedging{}).Suppressed() {
			sup = append(sup, fmt.Sprintf("%s %d", s.Reason, h.Suppressed[s.Reason]))
		}
		for _, s := range (tailroute.Hedging{}).Deferred() {
			def = append(def, fmt.Sprintf("%s %d", s.Reason, h.Deferred[s.Reason]))
		}
		if _, err := fmt.Fprintf(w, "%s hedging: armed %d, fired %d (%.2f%% extra requests), won %d, lost %d; suppressed: %s; deferred: %s\n",
			res.Policy, h.Armed, h.Fired, h.ExtraPct, h.Won, h.Lost, strings.Join(sup, ", "), strings.Join(def, ", ")); err != nil {
			return err
		}
	}
	return nil
}
