package sim

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/require"
)

// fwdSetup starts a 3-node cluster with keyspace ycsb at replication rf and
// returns it, a key whose first replica is not node 0 and a session whose
// only coordinator is node 0, which is not a replica of that key.
func fwdSetup(t *testing.T, rf int, m ServiceModel) (*Cluster, string, *gocql.Session) {
	t.Helper()
	c := startCluster(t, Config{Nodes: 3, Model: m})
	createYCSB(t, c, "ycsb", fmt.Sprintf("{'class':'SimpleStrategy','replication_factor':%d}", rf), 1)
	coord := c.Nodes()[0].IP()
	var key string
	for i := 0; ; i++ {
		key = fmt.Sprint("k", i)
		reps := c.ReplicasFor("ycsb", []byte(key))
		if !containsStr(reps, coord) {
			break
		}
	}
	s := sessionOnHosts(t, c.Port(), "ycsb", coord)
	t.Cleanup(s.Close)
	require.NoError(t, s.Query("INSERT INTO usertable (y_id, field0) VALUES (?, 'v')", key).Exec())
	return c, key, s
}

func containsStr(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func readKey(s *gocql.Session, key string) error {
	var f string
	return s.Query("SELECT field0 FROM usertable WHERE y_id = ?", key).Scan(&f)
}

func TestForwardedReadChargesReplica(t *testing.T) {
	c, key, s := fwdSetup(t, 1, ServiceModel{MeanService: time.Millisecond, Slowdown: 5})
	coord, rep := c.Nodes()[0], c.Node(c.ReplicasFor("ycsb", []byte(key))[0])
	c0, r0 := coord.Stats(), rep.Stats()
	const reads = 20
	for i := 0; i < reads; i++ {
		require.NoError(t, readKey(s, key))
	}
	c1, r1 := coord.Stats(), rep.Stats()
	require.Equal(t, uint64(reads), r1.Served-r0.Served, "the replica executes every read")
	require.Equal(t, c0.Served, c1.Served, "the non-replica coordinator serves none")
	require.Equal(t, uint64(reads), c1.Forwarded-c0.Forwarded)
	tp := rep.ThreadPools()
	require.GreaterOrEqual(t, tp[stageRead].CompletedTasks, int64(reads), "the replica's ReadStage did the work")
}

func TestSnitchSteersToFastReplica(t *testing.T) {
	c, key, s := fwdSetup(t, 2, ServiceModel{MeanService: 2 * time.Millisecond})
	reps := c.ReplicasFor("ycsb", []byte(key))
	first, second := c.Node(reps[0]), c.Node(reps[1])
	require.NoError(t, first.SetModel(ServiceModel{MeanService: 2 * time.Millisecond, Slowdown: 50}))
	for i := 0; i < 10; i++ { // warm-up: the snitch learns both latencies
		require.NoError(t, readKey(s, key))
		time.Sleep(30 * time.Millisecond)
	}
	f0, s0 := first.Stats().Served, second.Stats().Served
	const reads = 20
	for i := 0; i < reads; i++ {
		require.NoError(t, readKey(s, key))
		time.Sleep(10 * time.Millisecond)
	}
	require.LessOrEqual(t, first.Stats().Served-f0, uint64(2), "the slow first replica is avoided")
	require.GreaterOrEqual(t, second.Stats().Served-s0, uint64(reads-2))
}

func TestSnitchBadnessThreshold(t *testing.T) {
	var s snitch
	now := time.Unix(1000, 0)
	require.Equal(t, 1, s.pick([]int{1, 2}, now), "no samples: subsnitch order")
	s.record(1, 10*time.Millisecond)
	s.record(2, 9500*time.Microsecond)
	now = now.Add(snitchUpdateInterval)
	require.Equal(t, 1, s.pick([]int{1, 2}, now), "within 10%: subsnitch order")
	for i := 0; i < snitchWindow; i++ {
		s.record(1, 12*time.Millisecond)
	}
	require.Equal(t, 1, s.pick([]int{1, 2}, now.Add(snitchUpdateInterval/2)), "scores change only every update interval")
	now = now.Add(snitchUpdateInterval)
	require.Equal(t, 2, s.pick([]int{1, 2}, now), "more than 10% worse: best score")
	now = now.Add(snitchResetInterval)
	require.Equal(t, 1, s.pick([]int{1, 2}, now), "reset drops the samples")
}

func TestForwardWaitsForPauses(t *testing.T) {
	c, key, s := fwdSetup(t, 1, ServiceModel{ZeroService: true})
	coord, rep := c.Nodes()[0], c.Node(c.ReplicasFor("ycsb", []byte(key))[0])
	for _, paused := range []*Node{rep, coord} {
		before := rep.Stats().Served
		paused.Pause(2 * time.Second)
		done := make(chan error, 1)
		go func() { done <- readKey(s, key) }()
		time.Sleep(300 * time.Millisecond)
		require.Equal(t, before, rep.Stats().Served, "no read completes while %s is paused", paused.IP())
		select {
		case err := <-done:
			t.Fatalf("read answered during the pause of %s: %v", paused.IP(), err)
		default:
		}
		require.NoError(t, <-done)
		require.Equal(t, before+1, rep.Stats().Served)
	}
}

func TestForwardedReadReplicaErrors(t *testing.T) {
	c, key, s := fwdSetup(t, 1, ServiceModel{ZeroService: true})
	rep := c.Node(c.ReplicasFor("ycsb", []byte(key))[0])
	for _, kind := range []string{"overloaded", "unavailable", "read_timeout"} {
		require.NoError(t, rep.SetModel(ServiceModel{ZeroService: true, ErrorRate: 1, InjectedError: kind}))
		e0 := rep.Stats().Errors
		err := readKey(s, key)
		var rt *gocql.RequestErrReadTimeout
		require.True(t, errors.As(err, &rt), "%s on the replica: the coordinator reports a read timeout, got %v", kind, err)
		require.Greater(t, rep.Stats().Errors, e0, "the replica counts its error")
	}
	require.NoError(t, rep.SetModel(ServiceModel{ZeroService: true}))
	coord := c.Nodes()[0]
	require.NoError(t, coord.SetModel(ServiceModel{ZeroService: true, ErrorRate: 1}))
	served := rep.Stats().Served
	err := readKey(s, key)
	var re gocql.RequestError
	require.True(t, errors.As(err, &re) && re.Code() == gocql.ErrCodeOverloaded, "the coordinator's own Overloaded, got %v", err)
	require.Equal(t, served, rep.Stats().Served, "nothing forwarded")
}
