package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// FaultStats describes how a policy treated the node a fault scenario
// (error-node, recovering) acted on.
type FaultStats struct {
	Node string `json:"node"`
	// ShareDuringFault is the node's share of the requests all nodes
	// received while the fault lasted.
	ShareDuringFault float64 `json:"share_during_fault"`
	// Ended reports that the fault ended before the run did.
	Ended bool `json:"ended,omitempty"`
	// ShareAfterFault is the node's share after the fault ended.
	ShareAfterFault float64 `json:"share_after_fault,omitempty"`
	// RecoveryMs is the time from the end of the fault until the node got
	// its fair share back: the end of the first 500 ms (five 100 ms
	// windows) in which it received at least 75 % of 1/nodes of the
	// requests; -1 = not within the run (or the fault did not end).
	RecoveryMs float64 `json:"recovery_ms"`
}

// writeFaults prints errors by kind and the fault node's figures, one line
// per policy, when any result has them.
func (r *Report) writeFaults(w io.Writer) error {
	for _, res := range r.Results {
		if len(res.ErrorsByKind) > 0 {
			kinds := make([]string, 0, len(res.ErrorsByKind))
			for k := range res.ErrorsByKind {
				kinds = append(kinds, k)
			}
			sort.Strings(kinds)
			parts := make([]string, len(kinds))
			for i, k := range kinds {
				parts[i] = fmt.Sprintf("%s %d", k, res.ErrorsByKind[k])
			}
			if _, err := fmt.Fprintf(w, "%s errors by kind: %s\n", res.Policy, strings.Join(parts, ", ")); err != nil {
				return err
			}
		}
		if f := res.Fault; f != nil {
			line := fmt.Sprintf("%s fault node %s: %.1f%% of requests during the fault", res.Policy, shortHost(f.Node), 100*f.ShareDuringFault)
			if f.Ended {
				line += fmt.Sprintf(", %.1f%% after", 100*f.ShareAfterFault)
				if f.RecoveryMs >= 0 {
					line += fmt.Sprintf(", fair share back after %.0f ms", f.RecoveryMs)
				} else {
					line += ", fair share not back within the run"
				}
			}
			if _, err := fmt.Fprintln(w, line); err != nil {
				return err
			}
		}
	}
	return nil
}
