package speculative

import "github.com/tailroute/tailroute/internal/hedge"

// budget caps hedges to a fraction of requests over a sliding window; see
// hedge.Budget.
type budget = hedge.Budget

func newBudget(fraction float64, windowNs int64) *budget { return hedge.NewBudget(fraction, windowNs) }
