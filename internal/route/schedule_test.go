package route

import (
	"context"
	"errors"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/tracker"
)

// waitTimers waits (in real time, bounded) until n timers of clk are armed:
// the poller's goroutines have scheduled their next wake-up.
func waitTimers(t *testing.T, clk *tracker.ManualClock, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for clk.Timers() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d timers armed, want %d", clk.Timers(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// recvPolls receives n polls (bounded in real time) and returns the hosts
// polled, sorted.
func recvPolls(t *testing.T, polls <-chan string, n int) []string {
	t.Helper()
	var got []string
	for len(got) < n {
		select {
		case id := <-polls:
			got = append(got, id)
		case <-time.After(10 * time.Second):
			t.Fatalf("got polls %v, want %d", got, n)
		}
	}
	sort.Strings(got)
	return got
}

// noPoll checks that no poll arrives while the clock stands still.
func noPoll(t *testing.T, polls <-chan string, why string) {
	t.Helper()
	select {
	case id := <-polls:
		t.Fatalf("poll of %s: %s", id, why)
	case <-time.After(20 * time.Millisecond):
	}
}

// The server-load poller takes its schedule from the policy's clock: with
// a ManualClock nothing is polled while time stands still, every host is
// polled once within the first interval, and each host's next poll comes
// 0.8 to 1.2 intervals after its previous one.
func TestPollScheduleFollowsClock(t *testing.T) {
	const iv = 100 * time.Millisecond
	clk := tracker.NewManualClock(time.Second)
	r, err := New[*testHost, any](Hooks{}, tailroute.WithServerLoad(iv), tailroute.WithClock(clk))
	require.NoError(t, err)
	r.AddHosts([]*testHost{{id: "a"}, {id: "b"}})
	polls := make(chan string, 16)
	var closed atomic.Bool
	r.StartServerLoad(PollDriver[*testHost]{
		Closed: closed.Load,
		Query: func(_ context.Context, _ *testHost, id string) (ThreadPoolSample, error) {
			polls <- id
			return ThreadPoolSample{}, errors.New("no sample") // dropped; polled again next time
		},
	})
	defer func() { closed.Store(true); clk.Advance(2 * iv) }() // the loops see the session closed and stop

	waitTimers(t, clk, 3) // the supervisor's and one per host
	noPoll(t, polls, "the clock has not moved")

	clk.Advance(iv) // the first polls are spread over one interval
	assert.Equal(t, []string{"a", "b"}, recvPolls(t, polls, 2))
	waitTimers(t, clk, 3)

	clk.Advance(iv*8/10 - time.Nanosecond)
	noPoll(t, polls, "less than 0.8 intervals after the previous poll")
	clk.Advance(iv*4/10 + time.Nanosecond) // 1.2 intervals after
	assert.Equal(t, []string{"a", "b"}, recvPolls(t, polls, 2))
	waitTimers(t, clk, 3)
	noPoll(t, polls, "one poll per host per interval")
	assert.EqualValues(t, 4, r.ServerLoadCounters().Polls)
	assert.EqualValues(t, 4, r.ServerLoadCounters().Failures)
}
