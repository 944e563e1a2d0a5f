package main

import (
	"context"
	"net"
	"testing"
	"time"

	gocql2 "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/gocql/gocql"
)

// Both drivers' installs put the datastax policy into the session with
// -local-dc and its observer feeding that same policy.
func TestDatastaxInstallWiresObserver(t *testing.T) {
	env := policyEnv{localDC: "dc1", seed: 1}
	cfg := gocql.NewCluster("127.0.0.1")
	spec, err := lookupPolicy("datastax")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := spec.v1(env, cfg); err != nil {
		t.Fatal(err)
	}
	p, ok := cfg.PoolConfig.HostSelectionPolicy.(*datastaxPolicy)
	o, _ := cfg.QueryObserver.(dsObserver)
	if !ok || o.p != p || !p.observed.Load() {
		t.Fatalf("v1: policy %T, observer %T feeding another policy or not installed", cfg.PoolConfig.HostSelectionPolicy, cfg.QueryObserver)
	}
	cfg2 := gocql2.NewCluster("127.0.0.1")
	spec2, err := lookupV2("datastax")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := spec2.v2(env, cfg2); err != nil {
		t.Fatal(err)
	}
	p2, ok := cfg2.PoolConfig.HostSelectionPolicy.(*datastaxPolicyV2)
	o2, _ := cfg2.QueryObserver.(dsObserverV2)
	if !ok || o2.p != p2 || !p2.observed.Load() {
		t.Fatalf("v2: policy %T, observer %T feeding another policy or not installed", cfg2.PoolConfig.HostSelectionPolicy, cfg2.QueryObserver)
	}
}

// fakeSourceV2 is fakeSource for the v2 driver.
type fakeSourceV2 struct {
	gocql2.HostSelectionPolicy // nil: other methods are not used
	replicas, others           []*gocql2.HostInfo
}

type fakeSelectedV2 struct{ h *gocql2.HostInfo }

func (f fakeSelectedV2) Info() *gocql2.HostInfo { return f.h }
func (f fakeSelectedV2) Mark(error)             {}

func (s *fakeSourceV2) Pick(gocql2.ExecutableStatement) gocql2.NextHost {
	i := 0
	return func() gocql2.SelectedHost {
		defer func() { i++ }()
		switch {
		case i < len(s.replicas):
			return fakeSelectedV2{s.replicas[i]}
		case i < len(s.replicas)+len(s.others):
			return fallbackHostV2{fakeSelectedV2{s.others[i-len(s.replicas)]}}
		}
		return nil
	}
}

// dsHostInfoV2 is a v2 host without a host ID (hostKey falls back to the
// connect address).
func dsHostInfoV2(t *testing.T, ip string) *gocql2.HostInfo {
	h, err := gocql2.NewHostInfoFromAddrPort(net.ParseIP(ip), 9042)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// The v2 adapter runs the core's rules: the busy replica goes last, the
// less loaded of the first two goes first, the fallback follows; a client
// timeout (v2's ErrTimeoutNoResponse) stays in flight until a later
// response, and Mark changes nothing once the observer is installed.
func TestDatastaxV2PlanAndObserver(t *testing.T) {
	src := &fakeSourceV2{others: []*gocql2.HostInfo{dsHostInfoV2(t, "10.0.1.1")}}
	for _, ip := range []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"} {
		src.replicas = append(src.replicas, dsHostInfoV2(t, ip))
	}
	p := newDatastaxPolicyV2("", 1)
	p.HostSelectionPolicy = src
	clock := 10 * time.Second
	p.now = func() time.Duration { return clock }
	cfg := gocql2.NewCluster("127.0.0.1")
	cfg.Timeout = time.Second
	wireDatastaxV2(cfg, p)
	dsSetInFlight(p.dsCore, src.replicas[0], 20) // busy, no responses: unhealthy
	dsSetInFlight(p.dsCore, src.replicas[1], 5)
	for range 20 {
		next := p.Pick(nil)
		var ids []string
		for h := next(); h != nil; h = next() {
			ids = append(ids, h.Info().ConnectAddress().String())
		}
		want := []string{"10.0.0.3", "10.0.0.2", "10.0.0.1", "10.0.1.1"}
		if len(ids) != 4 || ids[0] != want[0] || ids[1] != want[1] || ids[2] != want[2] || ids[3] != want[3] {
			t.Fatalf("plan %v, want %v", ids, want)
		}
		dsSetInFlight(p.dsCore, src.replicas[0], 20)
		dsSetInFlight(p.dsCore, src.replicas[1], 5)
		dsSetInFlight(p.dsCore, src.replicas[2], 0)
		dsSetInFlight(p.dsCore, src.others[0], 0)
	}
	h := src.others[0]
	attempt := func(elapsed time.Duration, err error) {
		sel := p.Pick(nil)
		var last gocql2.SelectedHost
		for x := sel(); x != nil; x = sel() {
			last = x // the fallback host, handed out last
		}
		clock += elapsed
		cfg.QueryObserver.ObserveQuery(context.Background(), gocql2.ObservedQuery{Host: h, Start: time.Now().Add(-elapsed), End: time.Now(), Err: err})
		last.Mark(nil)
	}
	attempt(40*time.Millisecond, gocql2.ErrTimeoutNoResponse)
	if got, n := dsInFlight(p.dsCore, h), dsResponses(p.dsCore, h); got != 1 || n != 0 {
		t.Fatalf("after a client timeout: in flight %d, responses %d; want 1, 0", got, n)
	}
	attempt(time.Millisecond, nil)
	if got, n := dsInFlight(p.dsCore, h), dsResponses(p.dsCore, h); got != 0 || n != 1 {
		t.Fatalf("after a later response: in flight %d, responses %d; want 0, 1", got, n)
	}
}
