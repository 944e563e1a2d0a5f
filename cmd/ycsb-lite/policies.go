package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gocql/gocql"
	"github.com/hailocab/go-hostpool"
	"github.com/tailroute/tailroute/sim"
	"github.com/tailroute/tailroute/stats"
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

// policySpec is one --policy choice.
type policySpec struct {
	name    string
	help    string
	simOnly bool // needs the embedded simulated cluster
	// noLocalDC marks a policy that cannot keep to a local DC (-local-dc
	// is refused with it).
	noLocalDC bool
	payload   bool // reads the simulator's payload feedback (turned on for its runs)
	// install configures cfg to use the policy.
	install func(env policyEnv, cfg *gocql.ClusterConfig) (installed, error)
}

// installed is what an installed policy hands back.
type installed struct {
	// release frees what the policy started, after the session is closed (may be nil).
	release func()
	// feedback, when set, is given every result before it is closed, so the
	// policy can read server feedback from the custom payload.
	feedback func(*gocql.Iter) bool
	// stats, when set, returns the policy's own per-host statistics for the JSON report.
	stats func() any
	// hedging, for +hedge policies, returns the hedger's counters (the
	// table's hedging line and the report's hedge_stats).
	hedging func() stats.Hedging
}

var policies = map[string]policySpec{}

// registerPolicy adds a policy choice; tailroute's strategies register in
// policies_tailroute.go.
func registerPolicy(p policySpec) {
	if _, dup := policies[p.name]; dup {
		panic("ycsb-lite: policy registered twice: " + p.name)
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

func init() {
	registerPolicy(policySpec{
		name: "token-aware",
		help: "gocql TokenAwareHostPolicy over RoundRobinHostPolicy (the usual gocql setup; DCAwareRoundRobinPolicy with -local-dc)",
		install: func(env policyEnv, cfg *gocql.ClusterConfig) (installed, error) {
			cfg.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(roundRobin(env.localDC))
			return installed{}, nil
		},
	})
	registerPolicy(policySpec{
		name: "round-robin",
		help: "gocql RoundRobinHostPolicy (ignores replicas; DCAwareRoundRobinPolicy with -local-dc)",
		install: func(env policyEnv, cfg *gocql.ClusterConfig) (installed, error) {
			cfg.PoolConfig.HostSelectionPolicy = roundRobin(env.localDC)
			return installed{}, nil
		},
	})
	registerPolicy(policySpec{
		name:      "host-pool",
		help:      "gocql HostPoolHostPolicy with go-hostpool's epsilon-greedy pool (latency-aware, not replica- or DC-aware)",
		noLocalDC: true,
		install: func(_ policyEnv, cfg *gocql.ClusterConfig) (installed, error) {
			hp := hostpool.NewEpsilonGreedy(nil, 0, &hostpool.LinearEpsilonValueCalculator{})
			cfg.PoolConfig.HostSelectionPolicy = gocql.HostPoolHostPolicy(hp)
			return installed{release: hp.Close}, nil
		},
	})
	registerPolicy(policySpec{
		name:      "oracle",
		help:      "simulated clusters only: the replica with the least true (queue+1) x service time, from Node.Oracle()",
		simOnly:   true,
		noLocalDC: true,
		install: func(env policyEnv, cfg *gocql.ClusterConfig) (installed, error) {
			if env.cluster == nil {
				return installed{}, fmt.Errorf("policy oracle needs the embedded simulated cluster (omit -hosts)")
			}
			cfg.PoolConfig.HostSelectionPolicy = newOraclePolicy(env.cluster)
			return installed{}, nil
		},
	})
}
