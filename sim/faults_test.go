package sim

import (
	"encoding/binary"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// latencies runs n reads of key against the session with conc goroutines and
// returns the sorted client-side latencies.
func latencies(t *testing.T, s *gocql.Session, key string, n, conc int) []time.Duration {
	t.Helper()
	var mu sync.Mutex
	var out []time.Duration
	var wg sync.WaitGroup
	errs := make(chan error, conc)
	for g := 0; g < conc; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var f string
			for i := 0; i < n/conc; i++ {
				st := time.Now()
				if err := s.Query("SELECT field0 FROM usertable WHERE y_id = ?", key).Scan(&f); err != nil {
					errs <- err
					return
				}
				d := time.Since(st)
				mu.Lock()
				out = append(out, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// oneNode starts a 1-node cluster with a row "k" and a session on it.
func oneNode(t testing.TB, m ServiceModel, feedback bool) (*Cluster, *gocql.Session) {
	c := startCluster(t, Config{Nodes: 1, Model: m, Feedback: feedback})
	createYCSB(t, c, "ycsb", "{'class':'SimpleStrategy','replication_factor':1}", 1)
	s := newSession(t, c, "ycsb", true)
	require.NoError(t, s.Query("INSERT INTO usertable (y_id, field0) VALUES (?, ?)", "k", "v").Exec())
	return c, s
}

func TestSlowdownRaisesMedianLatency(t *testing.T) {
	// 1/mu = 10 ms: the exponential median is 6.9 ms, 34.7 ms with
	// slowdown 5. The client's own overhead (ms per request on a loaded
	// machine, under -race) is in both medians, so the test asserts on
	// their difference: the slowdown adds 27.7 ms to the median, and at
	// least half of that must show. Without the slowdown the difference is
	// only scheduling noise.
	m := ServiceModel{Workers: 4, MeanService: 10 * time.Millisecond}
	c, s := oneNode(t, m, false)
	base := latencies(t, s, "k", 100, 4) // concurrency = W: no queueing
	m.Slowdown = 5
	require.NoError(t, c.Nodes()[0].SetModel(m))
	slow := latencies(t, s, "k", 100, 4)
	mb, ms := base[len(base)/2], slow[len(slow)/2]
	t.Logf("median base %v, slowdown 5x %v (+%v, ratio %.2f)", mb, ms, ms-mb, float64(ms)/float64(mb))
	assert.GreaterOrEqual(t, ms-mb, 14*time.Millisecond, "the slowdown adds 4 x 6.9 ms to the median service time")
	_, st := c.Nodes()[0].Oracle()
	assert.Equal(t, 50*time.Millisecond, st, "oracle reports the slowed mean service time")
}

func TestPauseDelaysQueuedRequests(t *testing.T) {
	c, s := oneNode(t, ServiceModel{Workers: 4, MeanService: time.Millisecond}, false)
	base := latencies(t, s, "k", 40, 4)
	n := c.Nodes()[0]
	// The pause is long enough for the 8 requests below to reach the node
	// before it ends on a loaded machine: the test's premise is that they
	// queue behind it (checked with InFlight).
	const pause = time.Second
	pausedAt := time.Now() // before Pause: the pause ends no earlier than pausedAt+pause
	n.Pause(pause)
	// requests sent during the pause wait for its end
	var wg sync.WaitGroup
	lat := make([]time.Duration, 8)
	for i := range lat {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var f string
			st := time.Now()
			assert.NoError(t, s.Query("SELECT field0 FROM usertable WHERE y_id = ?", "k").Scan(&f))
			lat[i] = time.Since(pausedAt)
			_ = st
		}(i)
	}
	require.Eventually(t, func() bool { return n.Stats().InFlight == 8 }, pause*9/10, time.Millisecond,
		"requests queue up behind the pause")
	wg.Wait()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	t.Logf("base median %v; completions after pause start: min %v max %v", base[len(base)/2], lat[0], lat[len(lat)-1])
	assert.GreaterOrEqual(t, lat[0], pause-5*time.Millisecond, "nothing completes before the pause ends")
	assert.Less(t, lat[len(lat)-1], pause+700*time.Millisecond, "queued requests complete soon after the pause")
	// and the node serves normally afterwards
	after := latencies(t, s, "k", 40, 4)
	assert.Less(t, after[len(after)/2], 100*time.Millisecond)
}

func TestPeriodicPauses(t *testing.T) {
	c, s := oneNode(t, ServiceModel{Workers: 4, MeanService: 500 * time.Microsecond,
		PauseEvery: 200 * time.Millisecond, PauseFor: 100 * time.Millisecond}, false)
	// run for three periods: pauses occupy [100,200) ms of every 200 ms period
	var lat []time.Duration
	deadline := time.Now().Add(600 * time.Millisecond)
	for time.Now().Before(deadline) {
		lat = append(lat, latencies(t, s, "k", 2, 2)...)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	slow := 0
	for _, d := range lat {
		if d > 20*time.Millisecond {
			slow++
		}
	}
	t.Logf("%d/%d requests delayed by periodic pauses; max %v", slow, len(lat), lat[len(lat)-1])
	assert.Greater(t, slow, 0)
	assert.Less(t, lat[len(lat)-1], time.Second)
	assert.Greater(t, lat[len(lat)-1], 50*time.Millisecond, "a request arriving early in a pause waits most of it")
	assert.Positive(t, c.Nodes()[0].Stats().Served)
}

func TestInjectedErrorsReachGocql(t *testing.T) {
	c, s := oneNode(t, ServiceModel{ZeroService: true}, false)
	n := c.Nodes()[0]
	check := func(kind string, ok func(error) bool) {
		t.Helper()
		require.NoError(t, n.SetModel(ServiceModel{ZeroService: true, ErrorRate: 1, InjectedError: kind}))
		before := n.Stats().Errors
		var f string
		err := s.Query("SELECT field0 FROM usertable WHERE y_id = ?", "k").
			RetryPolicy(&gocql.SimpleRetryPolicy{NumRetries: 0}).Scan(&f)
		require.Error(t, err, kind)
		assert.True(t, ok(err), "%s: got %T %v", kind, err, err)
		assert.Greater(t, n.Stats().Errors, before)
	}
	check("unavailable", func(err error) bool {
		var e *gocql.RequestErrUnavailable
		return errors.As(err, &e)
	})
	check("read_timeout", func(err error) bool {
		var e *gocql.RequestErrReadTimeout
		return errors.As(err, &e)
	})
	check("overloaded", func(err error) bool {
		var e gocql.RequestError
		return errors.As(err, &e) && e.Code() == gocql.ErrCodeOverloaded
	})
	// partial error rate: some succeed, some fail
	require.NoError(t, n.SetModel(ServiceModel{ZeroService: true, ErrorRate: 0.5, InjectedError: "unavailable"}))
	okN, errN := 0, 0
	for i := 0; i < 200; i++ {
		var f string
		if err := s.Query("SELECT field0 FROM usertable WHERE y_id = ?", "k").
			RetryPolicy(&gocql.SimpleRetryPolicy{NumRetries: 0}).Scan(&f); err != nil {
			errN++
		} else {
			okN++
		}
	}
	assert.InDelta(t, 100, errN, 40, "about half fail (ok %d, err %d)", okN, errN)
}

func TestFeedbackPayload(t *testing.T) {
	_, s := oneNode(t, ServiceModel{Workers: 1, MeanService: 2 * time.Millisecond}, true)
	iter := s.Query("SELECT field0 FROM usertable WHERE y_id = ?", "k").Iter()
	var f string
	require.True(t, iter.Scan(&f))
	p := iter.GetCustomPayload()
	require.NoError(t, iter.Close())
	require.Len(t, p[PayloadQueueLen], 8)
	require.Len(t, p[PayloadServiceTime], 8)
	assert.EqualValues(t, 0, binary.BigEndian.Uint64(p[PayloadQueueLen]), "alone in the queue")
	st := binary.BigEndian.Uint64(p[PayloadServiceTime])
	assert.Greater(t, st, uint64(0))
	assert.Less(t, st, uint64(time.Second/time.Microsecond))

	// concurrent requests on a 1-worker node see a queue
	var wg sync.WaitGroup
	var mu sync.Mutex
	maxQ := uint64(0)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			it := s.Query("SELECT field0 FROM usertable WHERE y_id = ?", "k").Iter()
			var f string
			it.Scan(&f)
			q := binary.BigEndian.Uint64(it.GetCustomPayload()[PayloadQueueLen])
			assert.NoError(t, it.Close())
			mu.Lock()
			maxQ = max(maxQ, q)
			mu.Unlock()
		}()
	}
	wg.Wait()
	assert.Greater(t, maxQ, uint64(0))
}

func TestStatsWindowsCountServedRequests(t *testing.T) {
	c, s := oneNode(t, ServiceModel{ZeroService: true}, false)
	for i := 0; i < 50; i++ {
		var f string
		require.NoError(t, s.Query("SELECT field0 FROM usertable WHERE y_id = ?", "k").Scan(&f))
	}
	st := c.Nodes()[0].Stats()
	var sum uint64
	for _, w := range st.Windows {
		sum += w
	}
	assert.EqualValues(t, 51, st.Served) // + the insert
	assert.Equal(t, st.Served, sum)
	assert.Equal(t, 0, st.QueueLen)
	assert.Equal(t, 0, st.InFlight)
}

func TestWorkersChangeAtRunTime(t *testing.T) {
	c, s := oneNode(t, ServiceModel{Workers: 4, MeanService: 20 * time.Millisecond}, false)
	n := c.Nodes()[0]
	// W goes down and up again; the node must end with exactly the last W
	for _, w := range []int{1, 3, 1, 2} {
		require.NoError(t, n.SetModel(ServiceModel{Workers: w, MeanService: 20 * time.Millisecond}))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	maxInService := 0
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			st := n.Stats()
			mu.Lock()
			maxInService = max(maxInService, st.InFlight-st.QueueLen)
			mu.Unlock()
			time.Sleep(time.Millisecond)
		}
	}()
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var f string
			assert.NoError(t, s.Query("SELECT field0 FROM usertable WHERE y_id = ?", "k").Scan(&f))
		}()
	}
	wg.Wait()
	close(stop)
	mu.Lock()
	defer mu.Unlock()
	assert.LessOrEqual(t, maxInService, 2, "never more than W=2 requests in service")
	assert.Equal(t, 2, maxInService, "W=2 workers busy under load")
}
