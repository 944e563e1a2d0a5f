package main

import (
	"io"
	"strings"
	"testing"
)

// -payload-feedback runs every policy that has a +payload variant as that
// variant, so the report names the signal; it needs the simulator.
func TestPayloadFeedbackFlagNamesTheSignal(t *testing.T) {
	o, err := parseFlags([]string{"-compare", "tailroute,tailroute-norate+hedge,tailroute-p2c,token-aware,tailroute+poll"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.payloadFeedback || strings.Join(o.policies, ",") != "tailroute,tailroute-norate+hedge,tailroute-p2c,token-aware,tailroute+poll" {
		t.Fatalf("without the flag: feedback %v, policies %v", o.payloadFeedback, o.policies)
	}
	o, err = parseFlags([]string{"-payload-feedback", "-compare", "tailroute,tailroute-norate+hedge,tailroute-p2c,token-aware"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := "tailroute+payload,tailroute-norate+payload+hedge,tailroute-p2c,token-aware"; !o.payloadFeedback || strings.Join(o.policies, ",") != want {
		t.Fatalf("feedback %v, policies %v, want %s", o.payloadFeedback, o.policies, want)
	}
	if _, err := parseFlags([]string{"-payload-feedback", "-hosts", "127.0.0.1"}, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "-payload-feedback needs the embedded simulated cluster") {
		t.Fatalf("err = %v", err)
	}
	if _, err := parseFlags([]string{"-compare", "tailroute+payload", "-hosts", "127.0.0.1"}, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "needs the embedded simulated cluster") {
		t.Fatalf("err = %v", err)
	}
}

// Each tailroute row had exactly the signal its name says: none (-nopoll),
// polled thread pools (the default budget, or a fixed interval; the polls
// are not counted as requests), or payload.
func TestSignalVariantsGetTheirSignalOnly(t *testing.T) {
	const ops = 400
	rep, _ := runJSON(t, "-compare", "tailroute-nopoll,tailroute,tailroute+poll100ms,tailroute+payload", "-nodes", "3", "-records", "100",
		"-ops", "400", "-target", "400", "-threads", "8", "-service-time", "2ms", "-scenario", "slow-node")
	if len(rep.Results) != 4 {
		t.Fatalf("results %+v", rep.Results)
	}
	if !strings.Contains(rep.Cluster, "payload feedback off except for +payload policies") ||
		!strings.Contains(rep.Cluster, "-nopoll and +payload do not poll") {
		t.Errorf("header does not name the signals: %q", rep.Cluster)
	}
	for i, want := range []string{"none", "poll", "poll", "payload"} {
		res := rep.Results[i]
		var hosts []any
		switch st := res.PolicyStats.(type) {
		case []any:
			hosts = st
		case map[string]any:
			hosts, _ = st["hosts"].([]any)
			sl, _ := st["server_load"].(map[string]any)
			if want != "poll" || sl == nil || sl["samples"].(float64) < 3 {
				t.Errorf("%s: server_load stats %v", res.Policy, sl)
			}
		}
		if len(hosts) != 3 {
			t.Fatalf("%s: policy stats %v", res.Policy, res.PolicyStats)
		}
		for _, h := range hosts {
			hm := h.(map[string]any)
			fb, sl := hm["has_feedback"].(bool), hm["has_server_load"].(bool)
			if fb != (want == "payload") || sl != (want == "poll") {
				t.Errorf("%s (%s): host %v HasFeedback %v HasServerLoad %v", res.Policy, want, hm["address"], fb, sl)
			}
		}
		var reqs int64
		for _, n := range res.Nodes {
			reqs += n.Requests
		}
		if reqs < ops || reqs > ops+ops/20 {
			t.Errorf("%s: %d requests counted for %d operations (polls must not count)", res.Policy, reqs, ops)
		}
	}
}

// -tail-term sets k of every tailroute policy's score Psi_s + k/mu_s (an idle
// host without a signal, as with tailroute-nopoll, scores R_s*(1+k)), the report's header names it, and
// a value outside 0..100 is a flag error; without the flag the policy's
// default (2) holds.
func TestTailTermFlag(t *testing.T) {
	o, err := parseFlags(nil, io.Discard)
	if err != nil || o.tailTerm != nil {
		t.Fatalf("default: tailTerm %v, err %v", o.tailTerm, err)
	}
	for _, bad := range []string{"101", "-0.5", "NaN"} {
		if _, err := parseFlags([]string{"-tail-term", bad}, io.Discard); err == nil ||
			!strings.Contains(err.Error(), "-tail-term") || !strings.Contains(err.Error(), "allowed 0..100, or -1 for the policy's default") {
			t.Errorf("-tail-term %s: err = %v", bad, err)
		}
	}
	for _, tc := range []struct {
		args   []string
		k      float64
		header bool
	}{{nil, 2, false}, {[]string{"-tail-term", "0"}, 0, true}, {[]string{"-tail-term", "5"}, 5, true}} {
		args := append([]string{"-compare", "tailroute-nopoll", "-nodes", "3", "-records", "100", "-ops", "200",
			"-target", "400", "-threads", "4", "-service-time", "1ms"}, tc.args...)
		rep, _ := runJSON(t, args...)
		if got := strings.Contains(rep.Cluster, "tail term k = "); got != tc.header {
			t.Errorf("%v: header %q", tc.args, rep.Cluster)
		}
		hosts, _ := rep.Results[0].PolicyStats.([]any)
		if len(hosts) != 3 {
			t.Fatalf("%v: policy stats %v", tc.args, rep.Results[0].PolicyStats)
		}
		// The report's stats are taken some time after the run's last
		// response; a host idle longer than ForgetAfter is ranked with its
		// R_s pulled from its own toward the other hosts' mean (tracker
		// Config.ForgetAfter), and how far depends on when the score was
		// taken, which a busy machine delays. So the R_s the score used
		// lies between the host's own R_s and the others' mean, whenever
		// it was taken: score / (1 + k) must lie in that interval.
		checked := 0
		for i, h := range hosts {
			hm := h.(map[string]any)
			r, score := hm["response_time_us"].(float64), hm["score_us"].(float64)
			if hm["in_flight"].(float64) != 0 || hm["orphaned"].(float64) != 0 || r <= 0 {
				continue
			}
			lo, hi := r, r
			var sum, n float64
			for j, o := range hosts {
				if or := o.(map[string]any)["response_time_us"].(float64); j != i && or > 0 {
					sum, n = sum+or, n+1
				}
			}
			if n > 0 {
				lo, hi = min(r, sum/n), max(r, sum/n)
			}
			checked++
			if rs := score / (1 + tc.k); rs < lo*0.99 || rs > hi*1.01 {
				t.Errorf("%v: host %v score %.0f / (1+k) = %.0f, want an R_s between the host's own %.0f and the others' mean (%.0f..%.0f), k = %v",
					tc.args, hm["address"], score, rs, r, lo, hi, tc.k)
			}
		}
		if checked == 0 {
			t.Errorf("%v: no idle host with an R_s to check in %v", tc.args, hosts)
		}
	}
}
