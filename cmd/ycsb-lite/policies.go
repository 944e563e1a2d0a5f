package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	gocql2 "github.com/apache/cassandra-gocql-driver/v2"
	hostpool2 "github.com/apache/cassandra-gocql-driver/v2/hostpool"
	"github.com/gocql/gocql"
	"github.com/hailocab/go-hostpool"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/sim"
)

// policyEnv is what a policy may need when it is installed.
type policyEnv struct {
	cluster *sim.Cluster // nil when connecting to given hosts
	seed    int64
	rf      int
	// clients is how many independent clients (each with its own policy
	// instance) share the cluster; client is this instance's index.
	clients, client int
	// localDC is -local-dc: "" = every host is local.
	localDC string
	// tailTerm is -tail-term: nil = tailroute's default.
	tailTerm *float64
}

// policySpec is one --policy choice, for both drivers.
type policySpec struct {
	name    string
	help    string
	simOnly bool // needs the embedded simulated cluster
	// noLocalDC marks a policy that cannot keep to a local DC (-local-dc
	// is refused with it).
	noLocalDC bool
	payload   bool // reads the simulator's payload feedback (turned on for its runs)
	// v1 and v2 configure a new session of gocql v1 or of the v2 driver
	// (github.com/apache/cassandra-gocql-driver/v2) to use the policy.
	v1 func(env policyEnv, cfg *gocql.ClusterConfig) (installed, error)
	v2 func(env policyEnv, cfg *gocql2.ClusterConfig) (installed, error)
}

// installed is what an installed policy hands back.
type installed struct {
	// release frees what the policy started, after the session is closed (may be nil).
	release func()
	// stats, when set, returns the policy's own per-host statistics for the JSON report.
	stats func() any
	// feedback (gocql v1) and feedbackV2, when set, are given every result
	// before it is closed, so the policy can read server feedback from the
	// custom payload.
	feedback   func(*gocql.Iter) bool
	feedbackV2 func(*gocql2.Iter) bool
	// arm, v2 only and set for hedged policies, is what each query goes
	// through before it runs (apache/speculative hedges only executions
	// prepared with Hedger.Arm).
	arm func(context.Context, *gocql2.Query) context.Context
	// hedging, for +hedge policies, returns the hedger's counters (the
	// table's hedging line and the report's hedge_stats).
	hedging func() tailroute.Hedging
}

var policies = map[string]policySpec{}

// registerPolicy adds a policy choice; tailroute's strategies register in
// policies_tailroute.go.
func registerPolicy(p policySpec) {
	if _, dup := policies[p.name]; dup {
		panic("ycsb-lite: policy registered twice: " + p.name)
	}
	if p.v1 == nil || p.v2 == nil {
		panic("ycsb-lite: policy without an install for each driver: " + p.name)
	}
	policies[p.name] = p
}

func policyNames() []string {
	names := make([]string, 0, len(policies))
	for n := range policies {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func lookupPolicy(name string) (policySpec, error) {
	if spec, hedged, err := lookupHedged(name); hedged {
		return spec, err
	}
	p, ok := policies[strings.TrimSpace(name)]
	if !ok {
		return policySpec{}, fmt.Errorf("unknown policy %q; allowed: %s (each also as <policy>%s)", name, strings.Join(policyNames(), ", "), hedgeSuffix)
	}
	return p, nil
}

// localDCPolicyNames are the policies -local-dc applies to.
func localDCPolicyNames() []string {
	var out []string
	for _, n := range policyNames() {
		if !policies[n].noLocalDC {
			out = append(out, n)
		}
	}
	return out
}

// roundRobin is gocql's round robin over every host, or over the local
// DC's hosts first (DCAwareRoundRobinPolicy) when localDC is set.
func roundRobin(localDC string) gocql.HostSelectionPolicy {
	if localDC != "" {
		return gocql.DCAwareRoundRobinPolicy(localDC)
	}
	return gocql.RoundRobinHostPolicy()
}

// roundRobinV2 is roundRobin of the v2 driver.
func roundRobinV2(localDC string) gocql2.HostSelectionPolicy {
	if localDC != "" {
		return gocql2.DCAwareRoundRobinPolicy(localDC)
	}
	return gocql2.RoundRobinHostPolicy()
}

// The drivers' own policies and the simulator's oracle; with -driver v2 the
// v2 driver's token-aware, round-robin and host-pool (its hostpool package
// over the same go-hostpool epsilon-greedy pool).
func init() {
	registerPolicy(policySpec{
		name: "token-aware",
		help: "gocql TokenAwareHostPolicy over RoundRobinHostPolicy (the usual gocql setup; DCAwareRoundRobinPolicy with -local-dc)",
		v1: func(env policyEnv, cfg *gocql.ClusterConfig) (installed, error) {
			cfg.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(roundRobin(env.localDC))
			return installed{}, nil
		},
		v2: func(env policyEnv, cfg *gocql2.ClusterConfig) (installed, error) {
			cfg.PoolConfig.HostSelectionPolicy = gocql2.TokenAwareHostPolicy(roundRobinV2(env.localDC))
			return installed{}, nil
		},
	})
	registerPolicy(policySpec{
		name: "round-robin",
		help: "gocql RoundRobinHostPolicy (ignores replicas; DCAwareRoundRobinPolicy with -local-dc)",
		v1: func(env policyEnv, cfg *gocql.ClusterConfig) (installed, error) {
			cfg.PoolConfig.HostSelectionPolicy = roundRobin(env.localDC)
			return installed{}, nil
		},
		v2: func(env policyEnv, cfg *gocql2.ClusterConfig) (installed, error) {
			cfg.PoolConfig.HostSelectionPolicy = roundRobinV2(env.localDC)
			return installed{}, nil
		},
	})
	registerPolicy(policySpec{
		name:      "host-pool",
		help:      "gocql HostPoolHostPolicy with go-hostpool's epsilon-greedy pool (latency-aware, not replica- or DC-aware)",
		noLocalDC: true,
		v1: func(_ policyEnv, cfg *gocql.ClusterConfig) (installed, error) {
			hp := newHostPool()
			cfg.PoolConfig.HostSelectionPolicy = gocql.HostPoolHostPolicy(hp)
			return installed{release: hp.Close}, nil
		},
		v2: func(_ policyEnv, cfg *gocql2.ClusterConfig) (installed, error) {
			hp := newHostPool()
			cfg.PoolConfig.HostSelectionPolicy = hostpool2.HostPoolHostPolicy(hp)
			return installed{release: hp.Close}, nil
		},
	})
	registerPolicy(policySpec{
		name:      "oracle",
		help:      "simulated clusters only: the replica with the least true (queue+1) x service time, from Node.Oracle()",
		simOnly:   true,
		noLocalDC: true,
		v1: func(env policyEnv, cfg *gocql.ClusterConfig) (installed, error) {
			if env.cluster == nil {
				return installed{}, errOracleNeedsSim
			}
			cfg.PoolConfig.HostSelectionPolicy = newOraclePolicy(env.cluster)
			return installed{}, nil
		},
		v2: func(env policyEnv, cfg *gocql2.ClusterConfig) (installed, error) {
			if env.cluster == nil {
				return installed{}, errOracleNeedsSim
			}
			cfg.PoolConfig.HostSelectionPolicy = newOraclePolicyV2(env.cluster)
			return installed{}, nil
		},
	})
	registerPolicy(policySpec{
		name: "datastax",
		help: "port of the DataStax Java driver 4.x DefaultLoadBalancingPolicy: shuffled replicas, busy-replica avoidance, P2C on in-flight counts",
		v1: func(env policyEnv, cfg *gocql.ClusterConfig) (installed, error) {
			wireDatastax(cfg, newDatastaxPolicy(env.localDC, env.seed))
			return installed{}, nil
		},
		v2: func(env policyEnv, cfg *gocql2.ClusterConfig) (installed, error) {
			wireDatastaxV2(cfg, newDatastaxPolicyV2(env.localDC, env.seed))
			return installed{}, nil
		},
	})
}

// newHostPool is host-pool's go-hostpool epsilon-greedy pool.
func newHostPool() hostpool.HostPool {
	return hostpool.NewEpsilonGreedy(nil, 0, &hostpool.LinearEpsilonValueCalculator{})
}

var errOracleNeedsSim = fmt.Errorf("policy oracle needs the embedded simulated cluster (omit -hosts)")
