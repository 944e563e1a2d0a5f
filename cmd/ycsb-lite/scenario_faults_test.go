package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

func TestFaultFlagsRejected(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-error-rate", "1.5"}, "-error-rate 1.5: allowed a fraction in [0, 1]"},
		{[]string{"-error-kind", "boom"}, "-error-kind boom: allowed overloaded, unavailable, read_timeout"},
		{[]string{"-fault-until", "0"}, "-fault-until 0: allowed a fraction of the run in (0, 1], or -1"},
		{[]string{"-flap-every", "1ms"}, "-flap-every 1ms: allowed 20ms..1h"},
		{[]string{"-retries", "11"}, "-retries 11: allowed 0..10"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		if code := run(context.Background(), append(c.args, "-out", dir), &out, &errb); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", c.args, code, exitUsage)
		}
		if !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: stderr %q lacks %q", c.args, errb.String(), c.want)
		}
	}
}

// TestFaultScenarios: each fault scenario runs on a small cluster and has
// its effect, and the report carries errors by kind and the fault node's
// share and recovery.
func TestFaultScenarios(t *testing.T) {
	small := []string{"-nodes", "3", "-records", "100", "-threads", "8", "-service-time", "2ms", "-target", "400"}
	t.Run("error-node", func(t *testing.T) {
		rep, log := runJSON(t, append(small, "-scenario", "error-node", "-error-rate", "1", "-error-kind", "unavailable",
			"-policy", "token-aware", "-ops", "1200", "-fault-until", "0.25")...)
		if !strings.Contains(log, "error-node: 127.0.0.3 fails 1 of its requests with unavailable") || !strings.Contains(log, "stops failing") {
			t.Errorf("scenario log: %s", log)
		}
		res := rep.Results[0]
		// token-aware keeps sending its share: about a third of the first
		// quarter's operations fail, all unavailable, none after. The
		// fault ends 0.75 s into a 3 s schedule, so the recovery (five
		// 100 ms windows at a fair share) has more than 2 s to show even
		// when a busy machine delays the first quarter and the rest
		// catches up faster than scheduled; with 600 operations and the
		// fault over at half, a run compressed that way ended before five
		// whole windows had passed and reported no recovery (-1).
		if res.Errors < 40 || res.ErrorsByKind["unavailable"] != res.Errors {
			t.Errorf("errors %d by kind %v", res.Errors, res.ErrorsByKind)
		}
		f := res.Fault
		if f == nil || f.Node != "127.0.0.3" || !f.Ended || f.ShareDuringFault < 0.2 || f.ShareAfterFault < 0.2 {
			t.Fatalf("fault stats %+v", f)
		}
		if f.RecoveryMs < 0 || f.RecoveryMs > 1000 {
			t.Errorf("token-aware ignores health: fair share at once, got %v ms", f.RecoveryMs)
		}
	})
	t.Run("error-node retries", func(t *testing.T) {
		rep, _ := runJSON(t, append(small, "-scenario", "error-node", "-error-rate", "1", "-retries", "2",
			"-policy", "token-aware", "-ops", "300")...)
		if res := rep.Results[0]; res.Errors != 0 || res.Fault == nil || res.Fault.Ended {
			t.Errorf("with two retries on the next host every operation succeeds: %d errors, %+v", res.Errors, res.Fault)
		}
	})
	t.Run("two-slow", func(t *testing.T) {
		_, log := runJSON(t, append(small, "-scenario", "two-slow", "-policy", "token-aware", "-ops", "200")...)
		if !strings.Contains(log, "127.0.0.2 serves 5x slower") || !strings.Contains(log, "127.0.0.3 serves 5x slower") {
			t.Errorf("scenario log: %s", log)
		}
	})
	t.Run("flapping", func(t *testing.T) {
		rep, log := runJSON(t, append(small, "-scenario", "flapping", "-flap-every", "400ms", "-policy", "token-aware", "-ops", "600")...)
		if !strings.Contains(log, "flapping: 127.0.0.3 down 200ms of every 400ms") {
			t.Errorf("scenario log: %s", log)
		}
		if res := rep.Results[0]; share(res, "127.0.0.3") >= share(res, "127.0.0.1") {
			t.Errorf("a node down half the time got a full share: %v", res.Nodes)
		}
	})
	t.Run("recovering", func(t *testing.T) {
		rep, log := runJSON(t, append(small, "-scenario", "recovering", "-policy", "oracle", "-ops", "800")...)
		if !strings.Contains(log, "recovering: 127.0.0.3 serves 10x slower") || !strings.Contains(log, "serves normally again") {
			t.Errorf("scenario log: %s", log)
		}
		f := rep.Results[0].Fault
		if f == nil || !f.Ended || f.ShareDuringFault > 0.2 || f.ShareAfterFault < f.ShareDuringFault {
			t.Errorf("the oracle avoids the slow node, then uses it: %+v", f)
		}
	})
}

func TestFaultStatsRecovery(t *testing.T) {
	start := time.Unix(1000, 0)
	// three nodes, 30 windows of 100ms: node c gets nothing during
	// windows 0-9 (the fault), 1/12 of the requests in 10-14, 1/3 after.
	w := map[string][]uint64{"a": make([]uint64, 31), "b": make([]uint64, 31), "c": make([]uint64, 31)}
	for k := 0; k < 31; k++ {
		switch {
		case k < 10:
			w["a"][k], w["b"][k] = 10, 10
		case k < 15:
			w["a"][k], w["b"][k], w["c"][k] = 11, 11, 2
		default:
			w["a"][k], w["b"][k], w["c"][k] = 8, 8, 8
		}
	}
	end := start.Add(time.Second)
	f := faultStats("c", start, end, start, w)
	if f.ShareDuringFault != 0 || !f.Ended {
		t.Fatalf("%+v", f)
	}
	// the first whole window after the end is 11; five-window runs from
	// 11, 12, 13 hold 13 %, 18 %, 23 % for c, the run 14..18 holds
	// (2+4*8)/120 = 28 % >= 75 % of 1/3: recovered at 1.9s, 900ms after
	if f.RecoveryMs != 900 {
		t.Errorf("recovery %v ms, want 900", f.RecoveryMs)
	}
	if f2 := faultStats("c", start, time.Time{}, start, w); f2.Ended || f2.RecoveryMs != -1 {
		t.Errorf("fault to the end: %+v", f2)
	}
}

func TestErrorKind(t *testing.T) {
	cases := map[error]string{
		codeError(gocql.ErrCodeUnavailable):   "unavailable",
		codeError(gocql.ErrCodeReadTimeout):   "read_timeout",
		codeError(gocql.ErrCodeWriteTimeout):  "write_timeout",
		gocql.ErrTimeoutNoResponse:            "client_timeout",
		gocql.ErrNoConnections:                "no_connection",
		context.DeadlineExceeded:              "cancelled",
		fmt.Errorf("x: %w", context.Canceled): "cancelled",
		errors.New("something else"):          "other",
		codeError(gocql.ErrCodeOverloaded):    "overloaded",
		codeError(gocql.ErrCodeServer):        "server_0x0000",
	}
	for err, want := range cases {
		if got := errorKind(err); got != want {
			t.Errorf("%v: %q, want %q", err, got, want)
		}
	}
}

type codeError int

func (c codeError) Code() int       { return int(c) }
func (c codeError) Message() string { return "x" }
func (c codeError) Error() string   { return fmt.Sprintf("code %#x", int(c)) }
