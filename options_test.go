package tailroute

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute/internal/settings"
	"github.com/tailroute/tailroute/tracker"
)

// docDefaults names, for every option whose doc states a default, the
// constants that default is, in the order the doc names them.
var docDefaults = map[string][]any{
	"WithStrategy":            {DefaultStrategy},
	"WithConcurrencyWeight":   {DefaultConcurrencyWeight},
	"WithServerWorkers":       {DefaultServerWorkers},
	"WithTailTerm":            {DefaultTailTerm},
	"WithBusy":                {DefaultBusyInFlight, DefaultBusyNoResponse},
	"WithStall":               {DefaultStallFactor, DefaultStallMin},
	"WithRateControl":         {DefaultRateControl},
	"WithMaxBackpressureWait": {DefaultMaxBackpressureWait},
	"WithProbe":               {DefaultProbeAfter},
	"WithMaxCandidates":       {DefaultMaxCandidates},
	"WithHealthTolerance":     {DefaultHealthTolerance},
	"WithServerLoad":          {DefaultServerLoad},
	"WithPollBudget":          {DefaultPollShare, DefaultPollMinInterval, DefaultPollMaxInterval},
	"WithQuantile":            {DefaultQuantile},
	"WithDelayBounds":         {DefaultMinDelay, DefaultMaxDelay},
	"WithRefreshInterval":     {DefaultRefreshInterval},
	"WithBudget":              {DefaultBudgetFraction, DefaultBudgetWindow},
	"WithErrorHoldoff":        {DefaultErrorHoldoff},
	"WithBurstCap":            {DefaultBurstHorizon, DefaultBurstFactor, DefaultBurstFloor},
	"WithLoadRule":            {DefaultLoadRule},
	"WithZoneBound":           {DefaultZoneBound},
}

// docValue is a value as an option's doc writes it.
var docValue = regexp.MustCompile(`\b(?:C3|P2C|RoundRobin|true|false|\d+(?:\.\d+)?(?:µs|ms|s|m|h)?)`)

// format writes a default constant as the docs do.
func format(v any) string {
	switch v := v.(type) {
	case Strategy:
		return map[Strategy]string{C3: "C3", P2C: "P2C", RoundRobin: "RoundRobin"}[v]
	case time.Duration:
		return v.String()
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// TestDocDefaults: the default every option's doc states ("default 2",
// "Default 10 and 200ms") is its constant, and every Default constant is
// stated by some option's doc.
func TestDocDefaults(t *testing.T) {
	fset := token.NewFileSet()
	seen := map[string]bool{}
	used := map[string]bool{}
	for _, file := range []string{"options.go", "hedging.go", "defaults.go"} {
		f, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
		require.NoError(t, err)
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.CONST {
				for _, sp := range gd.Specs {
					for _, n := range sp.(*ast.ValueSpec).Names {
						if strings.HasPrefix(n.Name, "Default") {
							used[n.Name] = used[n.Name] || false
						}
					}
				}
			}
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || !strings.HasPrefix(fd.Name.Name, "With") {
				continue
			}
			name, doc := fd.Name.Name, strings.Join(strings.Fields(fd.Doc.Text()), " ")
			want, has := docDefaults[name]
			i := strings.Index(strings.ToLower(doc), "default ")
			if !has {
				continue
			}
			seen[name] = true
			if !assert.GreaterOrEqual(t, i, 0, "%s: doc states no default", name) {
				continue
			}
			phrase := doc[i+len("default "):]
			if end := regexp.MustCompile(`[;:]|\.( |$)`).FindStringIndex(phrase); end != nil {
				phrase = phrase[:end[0]]
			}
			got := docValue.FindAllString(phrase, -1)
			var wantS []string
			for _, v := range want {
				wantS = append(wantS, format(v))
			}
			if assert.GreaterOrEqual(t, len(got), len(wantS), "%s: %q", name, phrase) {
				assert.Equal(t, wantS, got[:len(wantS)], "%s: doc says default %q", name, phrase)
			}
		}
	}
	for name := range docDefaults {
		assert.True(t, seen[name], "%s: no such option", name)
	}
	// every Default constant is some option's documented default
	byValue := map[string]bool{}
	for _, vs := range docDefaults {
		for _, v := range vs {
			byValue[fmt.Sprintf("%T=%v", v, v)] = true
		}
	}
	consts := map[string]any{
		"DefaultStrategy": DefaultStrategy, "DefaultConcurrencyWeight": DefaultConcurrencyWeight,
		"DefaultServerWorkers": DefaultServerWorkers, "DefaultTailTerm": DefaultTailTerm,
		"DefaultBusyInFlight": DefaultBusyInFlight, "DefaultBusyNoResponse": DefaultBusyNoResponse,
		"DefaultStallFactor": DefaultStallFactor, "DefaultStallMin": DefaultStallMin,
		"DefaultRateControl": DefaultRateControl, "DefaultMaxBackpressureWait": DefaultMaxBackpressureWait,
		"DefaultProbeAfter": DefaultProbeAfter, "DefaultMaxCandidates": DefaultMaxCandidates,
		"DefaultHealthTolerance": DefaultHealthTolerance, "DefaultQuantile": DefaultQuantile,
		"DefaultMinDelay": DefaultMinDelay, "DefaultMaxDelay": DefaultMaxDelay,
		"DefaultRefreshInterval": DefaultRefreshInterval, "DefaultBudgetFraction": DefaultBudgetFraction,
		"DefaultBudgetWindow": DefaultBudgetWindow, "DefaultErrorHoldoff": DefaultErrorHoldoff,
		"DefaultBurstHorizon": DefaultBurstHorizon, "DefaultBurstFactor": DefaultBurstFactor,
		"DefaultBurstFloor": DefaultBurstFloor, "DefaultServerLoad": DefaultServerLoad,
		"DefaultPollShare": DefaultPollShare, "DefaultPollMinInterval": DefaultPollMinInterval,
		"DefaultPollMaxInterval": DefaultPollMaxInterval, "DefaultLoadRule": DefaultLoadRule,
		"DefaultZoneBound": DefaultZoneBound,
	}
	for name := range used {
		v, ok := consts[name]
		if assert.True(t, ok, "%s: declared but not checked against a doc", name) {
			assert.True(t, byValue[fmt.Sprintf("%T=%v", v, v)], "%s: no option's doc states it", name)
		}
	}
}

// TestDefaultsAreTheConstants: the settings before any option are the
// Default constants.
func TestDefaultsAreTheConstants(t *testing.T) {
	s, err := settings.Build[Option](settings.Routing, nil)
	require.NoError(t, err)
	r := s.Route
	assert.Equal(t, DefaultStrategy, Strategy(r.Strategy))
	assert.Equal(t, DefaultConcurrencyWeight, r.Weight)
	assert.Equal(t, float64(DefaultServerWorkers), r.Workers)
	assert.Equal(t, DefaultTailTerm, r.TailTerm)
	assert.Equal(t, DefaultBusyInFlight, r.BusyInFlight)
	assert.Equal(t, DefaultBusyNoResponse, r.BusyNoResponse)
	assert.Equal(t, DefaultStallFactor, r.StallFactor)
	assert.Equal(t, DefaultStallMin, r.StallMin)
	assert.Equal(t, DefaultRateControl, r.RateControl)
	assert.Equal(t, DefaultMaxBackpressureWait, r.MaxWait)
	assert.Equal(t, DefaultProbeAfter, r.ProbeAfter)
	assert.Equal(t, DefaultMaxCandidates, r.MaxCandidates)
	assert.Equal(t, DefaultHealthTolerance, r.HealthTol)
	assert.Equal(t, DefaultServerLoad, r.ServerLoad)
	assert.Equal(t, DefaultPollShare, r.PollShare)
	assert.Equal(t, DefaultPollMinInterval, r.PollMin)
	assert.Equal(t, DefaultPollMaxInterval, r.PollMax)
	h := s.Hedge
	assert.Equal(t, DefaultQuantile, h.Quantile)
	assert.Equal(t, DefaultMinDelay, h.MinDelay)
	assert.Equal(t, DefaultMaxDelay, h.MaxDelay)
	assert.Equal(t, DefaultRefreshInterval, h.Refresh)
	assert.Equal(t, DefaultBudgetFraction, h.Fraction)
	assert.Equal(t, DefaultBudgetWindow, h.Window)
	assert.Equal(t, DefaultErrorHoldoff, h.ErrorHoldoff)
	assert.Equal(t, DefaultBurstHorizon, h.BurstHorizon)
	assert.Equal(t, DefaultBurstFactor, h.BurstFactor)
	assert.Equal(t, DefaultBurstFloor, h.BurstFloor)
}

// TestOptionKinds: a policy takes routing options and WithClock, a Hedger
// hedging options and WithClock; an option of the other kind is an error
// that names it and where it belongs.
func TestOptionKinds(t *testing.T) {
	clk := tracker.NewManualClock(0)
	s, err := settings.Build(settings.Routing, []Option{WithTailTerm(0), WithClock(clk)})
	require.NoError(t, err)
	assert.Equal(t, 0.0, s.Route.TailTerm)
	assert.Equal(t, tracker.Clock(clk), s.Route.Tracker.Clock)
	s, err = settings.Build(settings.Hedging, []Option{WithBudget(0.1, time.Second), WithClock(clk)})
	require.NoError(t, err)
	assert.Equal(t, 0.1, s.Hedge.Fraction)
	assert.Equal(t, tracker.Clock(clk), s.Hedge.Clock)

	_, err = settings.Build(settings.Routing, []Option{WithBudget(0.1, time.Second)})
	assert.EqualError(t, err, "policy: option 0 (WithBudget) is a hedging option, for speculative.New")
	_, err = settings.Build(settings.Hedging, []Option{WithQuantile(0.9), WithTailTerm(1)})
	assert.EqualError(t, err, "speculative: option 1 (WithTailTerm) is a routing option, for policy.New")
	_, err = settings.Build(settings.Hedging, []Option{WithClock(nil)})
	assert.EqualError(t, err, "speculative: WithClock: Clock = nil, want a non-nil tracker.Clock")
	_, err = settings.Build(settings.Routing, []Option{WithClock(nil)})
	assert.EqualError(t, err, "policy: WithClock: Clock = nil, want a non-nil tracker.Clock")
}

// TestWithPollBudgetValidated: each bad value is an error naming the
// option, the field, the value and the allowed range; a fixed interval
// (share 1, minInterval = maxInterval) and the limits are allowed.
func TestWithPollBudgetValidated(t *testing.T) {
	for _, tc := range []struct {
		share    float64
		min, max time.Duration
		want     string
	}{
		{0, time.Second, time.Second, "WithPollBudget: PollShare = 0, allowed (0, 1]"},
		{-0.1, time.Second, time.Second, "WithPollBudget: PollShare = -0.1, allowed (0, 1]"},
		{1.5, time.Second, time.Second, "WithPollBudget: PollShare = 1.5, allowed (0, 1]"},
		{math.NaN(), time.Second, time.Second, "WithPollBudget: PollShare = NaN, allowed (0, 1]"},
		{0.1, 5 * time.Millisecond, time.Second, "WithPollBudget: PollMinInterval = 5ms, allowed 10ms..1m0s"},
		{0.1, 2 * time.Minute, 5 * time.Minute, "WithPollBudget: PollMinInterval = 2m0s, allowed 10ms..1m0s"},
		{0.1, time.Second, 500 * time.Millisecond, "WithPollBudget: PollMaxInterval = 500ms, allowed 1s (minInterval)..10m0s"},
		{0.1, time.Second, 11 * time.Minute, "WithPollBudget: PollMaxInterval = 11m0s, allowed 1s (minInterval)..10m0s"},
	} {
		_, err := settings.Build(settings.Routing, []Option{WithPollBudget(tc.share, tc.min, tc.max)})
		if assert.Error(t, err, "%+v", tc) {
			assert.Equal(t, "policy: "+tc.want, err.Error())
		}
	}
	for _, ok := range [][3]float64{{1, 0.01, 0.01}, {1e-6, 60, 600}, {0.5, 0.25, 0.25}} {
		s, err := settings.Build(settings.Routing, []Option{WithPollBudget(ok[0], time.Duration(ok[1]*1e9), time.Duration(ok[2]*1e9))})
		if assert.NoError(t, err, "%v", ok) {
			assert.Equal(t, ok[0], s.Route.PollShare)
			assert.Equal(t, time.Duration(ok[1]*1e9), s.Route.PollMin)
			assert.Equal(t, time.Duration(ok[2]*1e9), s.Route.PollMax)
		}
	}
	s, err := settings.Build(settings.Routing, []Option{WithServerLoad(false)})
	require.NoError(t, err)
	assert.False(t, s.Route.ServerLoad)
}

// TestWithServerWorkersValidated: W_s is 1 (the paper's single queue)
// unless set, within 1..65536.
func TestWithServerWorkersValidated(t *testing.T) {
	s, err := settings.Build[Option](settings.Routing, nil)
	require.NoError(t, err)
	assert.Equal(t, 1.0, s.Route.Workers, "the paper's single queue")
	for _, n := range []int{0, -1, tracker.MaxServerWorkers + 1} {
		_, err := settings.Build(settings.Routing, []Option{WithServerWorkers(n)})
		if assert.Error(t, err, "%d", n) {
			assert.NotContains(t, err.Error(), "\n", "one error")
			assert.Contains(t, err.Error(), "WithServerWorkers: ServerWorkers = ")
			assert.Contains(t, err.Error(), "allowed 1..65536")
		}
	}
	s, err = settings.Build(settings.Routing, []Option{WithServerWorkers(4)})
	require.NoError(t, err)
	assert.Equal(t, 4.0, s.Route.Workers)
}

func TestParseStrategy(t *testing.T) {
	for _, st := range []Strategy{C3, P2C, RoundRobin} {
		got, err := ParseStrategy(st.String())
		require.NoError(t, err)
		assert.Equal(t, st, got)
	}
	got, err := ParseStrategy(" RR ")
	require.NoError(t, err)
	assert.Equal(t, RoundRobin, got)
	_, err = ParseStrategy("best")
	assert.EqualError(t, err, `policy: strategy "best", allowed c3, p2c, roundrobin`)
	assert.Equal(t, "Strategy(7)", Strategy(7).String())
}

// An option value may build several policies: WithTracker keeps no state
// from one build to the next (each takes the clock and rate it is given
// before it, not the first build's).
func TestWithTrackerReusedAcrossBuilds(t *testing.T) {
	tc := WithTracker(tracker.Config{EWMAAlpha: 0.5})
	c1, c2 := tracker.NewManualClock(0), tracker.NewManualClock(0)
	s1, err := settings.Build(settings.Routing, []Option{WithClock(c1), tc})
	require.NoError(t, err)
	s2, err := settings.Build(settings.Routing, []Option{WithClock(c2), tc})
	require.NoError(t, err)
	assert.Same(t, c1, s1.Route.Tracker.Clock)
	assert.Same(t, c2, s2.Route.Tracker.Clock)
	assert.Equal(t, 0.5, s2.Route.Tracker.EWMAAlpha)
}
