// The policies of -driver v2, by the names of their v1 counterparts.

package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	gocql2 "github.com/apache/cassandra-gocql-driver/v2"
	hostpool2 "github.com/apache/cassandra-gocql-driver/v2/hostpool"
	"github.com/hailocab/go-hostpool"
	"github.com/tailroute/tailroute/apache/policy"
	"github.com/tailroute/tailroute/apache/speculative"
)

// Drivers -driver accepts.
const (
	driverV1 = "v1"
	driverV2 = "v2"
)

// installV2 configures a v2 ClusterConfig for a policy.
type installV2 func(env policyEnv, cfg *gocql2.ClusterConfig) (installedV2, error)

// installedV2 is installed plus, for hedged policies, arm: what each query
// goes through before it runs (apache/speculative hedges only executions
// prepared with Hedger.Arm). arm is nil for unhedged policies.
type installedV2 struct {
	installed
	arm func(context.Context, *gocql2.Query) context.Context
	// feedback, for +payload policies, reads the simulator's payload
	// feedback of every result before it is closed.
	feedback func(*gocql2.Iter) bool
}

// policiesV2 are the policies -driver v2 can run: tailroute's strategies
// through apache/policy (tailroute+poll with polled server load, pinned with
// SetHostID), the v2 driver's own token-aware, round-robin and host-pool
// (its hostpool package over the same go-hostpool epsilon-greedy pool), and
// the simulator's oracle (oracle_v2.go) and the DataStax port
// (datastax_v2.go). Each also runs as <policy>+hedge (apache/speculative,
// Arm per query). tailroute's strategies and their server-signal variants
// (tailrouteVariants) are added by init.
var policiesV2 = map[string]installV2{
	"token-aware": func(env policyEnv, cfg *gocql2.ClusterConfig) (installedV2, error) {
		cfg.PoolConfig.HostSelectionPolicy = gocql2.TokenAwareHostPolicy(roundRobinV2(env.localDC))
		return installedV2{}, nil
	},
	"round-robin": func(env policyEnv, cfg *gocql2.ClusterConfig) (installedV2, error) {
		cfg.PoolConfig.HostSelectionPolicy = roundRobinV2(env.localDC)
		return installedV2{}, nil
	},
	"host-pool": func(_ policyEnv, cfg *gocql2.ClusterConfig) (installedV2, error) {
		hp := hostpool.NewEpsilonGreedy(nil, 0, &hostpool.LinearEpsilonValueCalculator{})
		cfg.PoolConfig.HostSelectionPolicy = hostpool2.HostPoolHostPolicy(hp)
		return installedV2{installed: installed{release: hp.Close}}, nil
	},
	"oracle":   oracleV2,
	"datastax": datastaxV2,
}

// lookupV2 resolves a -driver v2 policy name, <policy>+hedge and its
// variants included.
func lookupV2(name string) (installV2, error) {
	name = strings.TrimSpace(name)
	if i := strings.LastIndex(name, hedgeSuffix); i >= 0 {
		variant, err := parseHedgeVariant(name[i+len(hedgeSuffix):])
		if err != nil {
			return nil, err
		}
		base, err := lookupV2(name[:i])
		if err != nil {
			return nil, err
		}
		return hedgedV2(base, variant), nil
	}
	if install := policiesV2[name]; install != nil {
		return install, nil
	}
	return nil, fmt.Errorf("-driver v2 runs the policies %s (each also as <policy>%s); not %q",
		strings.Join(policyNamesV2(), ", "), hedgeSuffix, name)
}

// hedgedV2 is hedgedSpec for the v2 driver: base with apache/speculative
// wired on top, the hedge delay from tailroute's tracker when the base
// policy is ours, and a retry policy so an error moves on to the next host.
func hedgedV2(base installV2, variant hedgeVariant) installV2 {
	return func(env policyEnv, cfg *gocql2.ClusterConfig) (installedV2, error) {
		inst, err := base(env, cfg)
		if err != nil {
			return inst, err
		}
		h, err := speculative.New(variant.options(cfg.PoolConfig.HostSelectionPolicy)...)
		if err != nil {
			return inst, err
		}
		if err := speculative.Wire(cfg, h); err != nil {
			return inst, err
		}
		if cfg.RetryPolicy == nil {
			cfg.RetryPolicy = &gocql2.SimpleRetryPolicy{NumRetries: 2}
		}
		inst.stats = hedgeStats(inst.stats, func() any { return h.Stats() })
		inst.hedging = h.Stats
		inst.arm = h.Arm
		return inst, nil
	}
}

// hedgeStats is the JSON report's stats of a hedged policy: the hedger's
// and, when it has some, the base policy's.
func hedgeStats(base func() any, hedging func() any) func() any {
	return func() any {
		out := map[string]any{"hedging": hedging()}
		if base != nil {
			out["policy"] = base()
		}
		return out
	}
}

// policyNamesV2 lists the policies of -driver v2 (without +hedge).
func policyNamesV2() []string {
	names := make([]string, 0, len(policiesV2))
	for n := range policiesV2 {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// checkDriver validates -driver against the chosen policies.
func checkDriver(driver string, policies []string) error {
	switch driver {
	case driverV1:
		return nil
	case driverV2:
		for _, p := range policies {
			if _, err := lookupV2(p); err != nil {
				return &flagError{err.Error()}
			}
		}
		return nil
	}
	return badFlag("driver", driver, "v1 (github.com/gocql/gocql) or v2 (github.com/apache/cassandra-gocql-driver/v2)")
}

func roundRobinV2(localDC string) gocql2.HostSelectionPolicy {
	if localDC != "" {
		return gocql2.DCAwareRoundRobinPolicy(localDC)
	}
	return gocql2.RoundRobinHostPolicy()
}

func init() {
	for _, t := range tailrouteVariants {
		strategy, err := policy.ParseStrategy(t.strategy)
		if err != nil {
			panic(err)
		}
		policiesV2[t.name] = tailrouteV2(strategy, t.rate, 0, false)
		if !t.signals {
			continue
		}
		for _, pi := range pollIntervals {
			policiesV2[t.name+pi.suffix] = tailrouteV2(strategy, t.rate, pi.interval, false)
		}
		policiesV2[t.name+payloadSuffix] = tailrouteV2(strategy, t.rate, 0, true)
	}
}

// tailrouteV2 installs tailroute through apache/policy: with polled server
// load when poll > 0, reading the simulator's payload feedback when payload.
func tailrouteV2(s policy.Strategy, rate bool, poll time.Duration, payload bool) installV2 {
	return func(env policyEnv, cfg *gocql2.ClusterConfig) (installedV2, error) {
		opts := []policy.Option{policy.WithStrategy(s), policy.WithRateControl(rate)}
		if env.clients > 1 {
			opts = append(opts, policy.WithConcurrencyWeight(float64(env.clients)))
		}
		if env.localDC != "" {
			opts = append(opts, policy.WithLocalDC(env.localDC))
		}
		if poll > 0 {
			opts = append(opts, policy.WithServerLoad(poll))
		}
		if env.tailTerm != nil {
			opts = append(opts, policy.WithTailTerm(*env.tailTerm))
		}
		p, err := policy.New(opts...)
		if err != nil {
			return installedV2{}, err
		}
		if err := policy.Wire(cfg, p); err != nil {
			return installedV2{}, err
		}
		inst := installed{stats: func() any { return p.Stats() }}
		if poll > 0 {
			inst.stats = func() any {
				return map[string]any{"hosts": p.Stats(), "server_load": p.ServerLoadCounters()}
			}
		}
		out := installedV2{installed: inst}
		if payload {
			out.feedback = p.RecordFeedback
		}
		return out, nil
	}
}
