package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// TestDriverV2 runs every -driver v2 policy, and tailroute+hedge, on a
// small simulated cluster with a slow node: each does every operation
// without error through the v2 driver, the host counters see every node,
// tailroute sends the slow node less than the driver's own token-aware
// policy, the hedged run reports its hedger's counters and the +payload
// runs read the simulator's payload feedback.
func TestDriverV2(t *testing.T) {
	names := append(policyNamesV2(), "tailroute+hedge")
	rep, _ := runJSON(t, "-driver", "v2", "-compare", strings.Join(names, ","), "-nodes", "3", "-rf", "3",
		"-records", "100", "-ops", "400", "-target", "400", "-threads", "8", "-service-time", "2ms", "-scenario", "slow-node", "-seed", "2")
	if len(rep.Results) != len(names) {
		t.Fatalf("%d results, want %d", len(rep.Results), len(names))
	}
	if !strings.Contains(rep.Command, "-driver v2") {
		t.Errorf("report command %q does not name the driver", rep.Command)
	}
	shares := map[string]float64{}
	slow := ""
	for _, res := range rep.Results {
		if res.Operations != 400 || res.Errors != 0 {
			t.Errorf("%s: %d ops, %d errors %v", res.Policy, res.Operations, res.Errors, res.ErrorsByKind)
		}
		var reqs int64
		for _, n := range res.Nodes {
			reqs += n.Requests
		}
		if len(res.Nodes) != 3 || reqs < 400 {
			t.Errorf("%s: nodes %+v (%d requests)", res.Policy, res.Nodes, reqs)
		}
		if slow == "" && len(res.Nodes) == 3 {
			slow = res.Nodes[2].Host // slow-node slows the last node
		}
		shares[res.Policy] = share(res, slow)
		if strings.HasSuffix(res.Policy, payloadSuffix) {
			hosts, _ := res.PolicyStats.([]any)
			fed := 0
			for _, h := range hosts {
				if m, _ := h.(map[string]any); m["has_feedback"] == true {
					fed++
				}
			}
			if fed == 0 {
				t.Errorf("%s: no host has payload feedback (stats %v)", res.Policy, res.PolicyStats)
			}
		}
		if res.Policy == "tailroute+hedge" {
			st, _ := res.PolicyStats.(map[string]any)
			h, _ := st["hedging"].(map[string]any)
			if exec, _ := h["executions"].(float64); exec < 400 {
				t.Errorf("tailroute+hedge: the hedger saw %v executions, want >= 400 (stats %v)", h["executions"], res.PolicyStats)
			}
			if _, ok := st["policy"]; !ok {
				t.Errorf("tailroute+hedge: no base policy stats in %v", res.PolicyStats)
			}
			if hs := res.HedgeStats; hs == nil || hs.Executions < 400 || float64(hs.Executions) >= h["executions"].(float64) {
				t.Errorf("tailroute+hedge: hedge_stats %+v, hedging %v", hs, h)
			}
		}
	}
	t.Logf("slow node %s share: %v", slow, shares)
	if !(shares["tailroute"] < shares["token-aware"]) {
		t.Errorf("tailroute sent the slow node %.3f of its requests, token-aware %.3f", shares["tailroute"], shares["token-aware"])
	}
}

func TestDriverFlagRejected(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-driver", "v3"}, "-driver v3"},
		{[]string{"-driver", "v2", "-compare", "tailroute+hedge-foo"}, `+hedge-cap<horizon>x<factor>`},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), c.args, &out, &errb)
		if code == exitOK || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, errb.String(), c.want)
		}
	}
}

// TestDriverV2HasEveryPolicy: every policy of -driver v1 runs with -driver
// v2 under the same name, hedged too.
func TestDriverV2HasEveryPolicy(t *testing.T) {
	for _, name := range policyNames() {
		for _, n := range []string{name, name + hedgeSuffix} {
			if _, err := lookupV2(n); err != nil {
				t.Errorf("%s: %v", n, err)
			}
		}
	}
	if _, err := lookupV2("no-such"); err == nil || !strings.Contains(err.Error(), "-driver v2 runs the policies") {
		t.Errorf("unknown policy: %v", err)
	}
}

// TestClusterConfigV2ProtocolVersion: the v2 sessions negotiate the
// protocol version, with the embedded cluster too, unless -protocol-version
// pins it.
func TestClusterConfigV2ProtocolVersion(t *testing.T) {
	for _, c := range []struct {
		args []string
		want int
	}{
		{nil, 0},
		{[]string{"-protocol-version", "3"}, 3},
		{[]string{"-hosts", "10.0.0.1"}, 0},
	} {
		o, err := parseFlags(append([]string{"-driver", "v2"}, c.args...), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		cfg := (&runner{o: o, stderr: io.Discard}).clusterConfigV2([]string{"127.0.0.1"}, 9042)
		if cfg.ProtoVersion != c.want {
			t.Errorf("%v: ProtoVersion %d, want %d", c.args, cfg.ProtoVersion, c.want)
		}
	}
}
