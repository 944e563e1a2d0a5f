package speculative

import (
	"context"
	"errors"

	"github.com/gocql/gocql"
)

// Wire turns hedging on for sessions created from cfg (every idempotent
// query with gocql v1; with the v2 driver, the executions prepared with
// Hedger.Arm): it wraps cfg.PoolConfig.HostSelectionPolicy (the driver's
// default RoundRobinHostPolicy when nil) with h.Wrap and, when h uses its
// built-in Recorder, adds the Recorder to cfg.QueryObserver and
// cfg.BatchObserver (chained after any observer already set). Call it
// after anything else that sets the policy or observers, e.g. after
// policy.Wire (which returns an error when called after Wire, rather than
// drop the hedging wrapper):
//
//	if err := policy.Wire(cluster, p); err != nil { ... }
//	h, err := speculative.New(tailroute.WithSource(p))
//	if err := speculative.Wire(cluster, h); err != nil { ... }
//
// It returns an error if cfg or h is nil or cfg is already wired.
func Wire(cfg *gocql.ClusterConfig, h *Hedger) error {
	if cfg == nil {
		return errors.New("speculative: Wire: cfg = nil, want a *gocql.ClusterConfig")
	}
	if h == nil {
		return errors.New("speculative: Wire: h = nil, want a *Hedger from New")
	}
	if _, ok := cfg.PoolConfig.HostSelectionPolicy.(interface{ Hedger() *Hedger }); ok {
		return errors.New("speculative: Wire: cfg.PoolConfig.HostSelectionPolicy is already a hedging policy")
	}
	cfg.PoolConfig.HostSelectionPolicy = h.Wrap(cfg.PoolConfig.HostSelectionPolicy)
	if h.rec != nil {
		if cfg.QueryObserver == nil {
			cfg.QueryObserver = h.rec
		} else {
			cfg.QueryObserver = queryObservers{cfg.QueryObserver, h.rec}
		}
		if cfg.BatchObserver == nil {
			cfg.BatchObserver = h.rec
		} else {
			cfg.BatchObserver = batchObservers{cfg.BatchObserver, h.rec}
		}
	}
	return nil
}

type queryObservers []gocql.QueryObserver

func (o queryObservers) ObserveQuery(ctx context.Context, q gocql.ObservedQuery) {
	for _, x := range o {
		x.ObserveQuery(ctx, q)
	}
}

type batchObservers []gocql.BatchObserver

func (o batchObservers) ObserveBatch(ctx context.Context, b gocql.ObservedBatch) {
	for _, x := range o {
		x.ObserveBatch(ctx, b)
	}
}
