package policy

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/simtest"
	"github.com/tailroute/tailroute/sim"
)

// wrappingPolicy stands for a wrapper such as speculative's hedging policy.
type wrappingPolicy struct{ gocql.HostSelectionPolicy }

func (w wrappingPolicy) Inner() gocql.HostSelectionPolicy { return w.HostSelectionPolicy }

// TestWireMisuse: nil arguments, a second Wire and a wrapper already set
// are errors that leave the config unchanged, never a panic, a
// self-chained observer or a dropped wrapper.
func TestWireMisuse(t *testing.T) {
	p, hosts, _ := testPolicy(t, 1)
	err := Wire(nil, p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cfg = nil")
	cfg := gocql.NewCluster("127.0.0.1")
	err = Wire(cfg, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "p = nil")
	assert.Nil(t, cfg.PoolConfig.HostSelectionPolicy)

	require.NoError(t, Wire(cfg, p))
	obs := cfg.QueryObserver
	err = Wire(cfg, p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "already wired to this cfg")
	assert.Same(t, obs, cfg.QueryObserver, "observer not chained to itself")
	base := time.Now()
	cfg.QueryObserver.ObserveQuery(context.Background(), gocql.ObservedQuery{Host: hosts[0], Start: base, End: base.Add(time.Millisecond)})
	assert.EqualValues(t, 1, p.r.Tracker().Host("h0").Snapshot().Samples, "one attempt measured once")

	cfg2 := gocql.NewCluster("127.0.0.1")
	err = Wire(cfg2, p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "another gocql.ClusterConfig")
	assert.Nil(t, cfg2.PoolConfig.HostSelectionPolicy)
	assert.Nil(t, cfg2.QueryObserver)

	p2, err := New()
	require.NoError(t, err)
	rr := gocql.RoundRobinHostPolicy()
	cfg3 := gocql.NewCluster("127.0.0.1")
	w := wrappingPolicy{rr}
	cfg3.PoolConfig.HostSelectionPolicy = w
	err = Wire(cfg3, p2)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "call policy.Wire first")
	assert.Equal(t, w, cfg3.PoolConfig.HostSelectionPolicy, "the wrapper is not dropped")
	assert.Nil(t, cfg3.QueryObserver)

	// a plain policy set before is replaced
	cfg3.PoolConfig.HostSelectionPolicy = rr
	require.NoError(t, Wire(cfg3, p2))
	assert.Same(t, p2, cfg3.PoolConfig.HostSelectionPolicy)

}

// logRecorder is a gocql.StdLogger that keeps what is logged.
type logRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (l *logRecorder) Print(v ...any)                 { l.add(fmt.Sprint(v...)) }
func (l *logRecorder) Printf(format string, v ...any) { l.add(fmt.Sprintf(format, v...)) }
func (l *logRecorder) Println(v ...any)               { l.add(fmt.Sprintln(v...)) }
func (l *logRecorder) add(s string)                   { l.mu.Lock(); l.lines = append(l.lines, s); l.mu.Unlock() }

func (l *logRecorder) find(sub string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			out = append(out, s)
		}
	}
	return out
}

// simConfig is simSession's cluster config, logging to log.
func simConfig(t testing.TB, c *sim.Cluster, p *Policy, log gocql.StdLogger) *gocql.ClusterConfig {
	t.Helper()
	cl := gocql.NewCluster(c.Hosts()...)
	cl.Port = c.Port()
	cl.Timeout = 5 * time.Second
	cl.ConnectTimeout = 10 * time.Second
	cl.ReconnectInterval = 200 * time.Millisecond
	cl.Logger = log
	require.NoError(t, Wire(cl, p))
	return cl
}

// TestUnknownLocalDC: a local DC that no host is in is reported (log and
// Err) once the session lists its hosts, and queries keep working: a name
// differing only in case falls back to that DC, an unknown one to every host.
func TestUnknownLocalDC(t *testing.T) {
	c := simtest.Start(t, sim.Config{Nodes: 4, DCs: 2, Seed: 5, Model: sim.ServiceModel{ZeroService: true}})
	dcOf := map[string]string{}
	for _, nd := range c.Nodes() {
		dcOf[nd.IP()] = nd.DC()
	}
	for _, tc := range []struct {
		name    string
		want    string // in the error
		planDCs []string
	}{
		{"DC1", `using "dc1", which differs only in case`, []string{"dc1"}},
		{"no-such-dc", "every host is treated as local", []string{"dc1", "dc2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(tailroute.WithLocalDC(tc.name))
			require.NoError(t, err, "not knowable at New")
			log := &logRecorder{}
			s, err := simConfig(t, c, p, log).CreateSession()
			require.NoError(t, err)
			defer s.Close()
			createKeyspace(t, s, "unknowndc", "{'class':'NetworkTopologyStrategy','dc1':2,'dc2':2}")
			for i := 0; i < 20; i++ {
				key := fmt.Sprintf("user%d", i)
				require.NoError(t, s.Query("INSERT INTO unknowndc.usertable (y_id, field0) VALUES (?, ?)", key, "v").Exec())
				var v string
				require.NoError(t, s.Query("SELECT field0 FROM unknowndc.usertable WHERE y_id = ?", key).Scan(&v))
				assert.Equal(t, "v", v)
			}
			err = p.Err()
			require.Error(t, err)
			assert.Contains(t, err.Error(), fmt.Sprintf("WithLocalDC(%q)", tc.name))
			assert.Contains(t, err.Error(), `the hosts' data centers: "dc1", "dc2"`)
			assert.Contains(t, err.Error(), tc.want)
			assert.Len(t, log.find(tc.want), 1, "logged once")

			next := p.Pick(&fakeQuery{key: []byte("user1"), ks: "unknowndc", idempotent: true})
			var hs []gocql.SelectedHost
			dcs := map[string]bool{}
			for h := next(); h != nil; h = next() {
				hs = append(hs, h)
				dcs[dcOf[h.Info().ConnectAddress().String()]] = true
			}
			for _, h := range hs {
				h.Mark(nil)
			}
			assert.ElementsMatch(t, tc.planDCs, simtest.Set(keys(dcs)))
		})
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestSecondSessionRefused: a second session on the same policy while the
// first is open is refused: the first keeps being served, the second gets
// no hosts (simtest.SecondSessionRefused).
func TestSecondSessionRefused(t *testing.T) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 6, Model: sim.ServiceModel{ZeroService: true}})
	p, err := New()
	require.NoError(t, err)
	log := &logRecorder{}
	cfg := simConfig(t, c, p, log)
	s1, err := cfg.CreateSession()
	require.NoError(t, err)
	defer s1.Close()
	createKeyspace(t, s1, "shared", "{'class':'SimpleStrategy','replication_factor':2}")
	simtest.SecondSessionRefused(t, sharedSession(s1), simtest.SharedPolicy{
		Err: p.Err, Hosts: func() int { return len(p.Stats()) }, LogLines: log.find, NoConnections: gocql.ErrNoConnections,
		OpenSecond: func() (simtest.SharedSession, func(), error) {
			s2, err := cfg.CreateSession()
			if err != nil {
				return simtest.SharedSession{}, func() {}, err
			}
			return sharedSession(s2), s2.Close, nil
		},
	}, 3)
}

func sharedSession(s *gocql.Session) simtest.SharedSession {
	return simtest.SharedSession{
		Exec: func(stmt string) error { return s.Query(stmt).Exec() },
		Read: func(stmt string) (v string, err error) { err = s.Query(stmt).Scan(&v); return v, err },
	}
}

// TestSessionAfterClose: a config reused after its session closed (a
// reconnect) is served from a clean slate.
func TestSessionAfterClose(t *testing.T) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 7, Model: sim.ServiceModel{ZeroService: true}})
	p, err := New()
	require.NoError(t, err)
	cfg := simConfig(t, c, p, quietLogger{})
	s1, err := cfg.CreateSession()
	require.NoError(t, err)
	createKeyspace(t, s1, "again", "{'class':'SimpleStrategy','replication_factor':2}")
	require.NoError(t, s1.Query("INSERT INTO again.usertable (y_id, field0) VALUES ('a', 'b')").Exec())
	s1.Close()
	s2, err := cfg.CreateSession()
	require.NoError(t, err)
	defer s2.Close()
	var v string
	require.NoError(t, s2.Query("SELECT field0 FROM again.usertable WHERE y_id = 'a'").Scan(&v))
	assert.Equal(t, "b", v)
	assert.NoError(t, p.Err())
	st := p.Stats()
	assert.Len(t, st, 3)
	var n uint64
	for _, s := range st {
		n += s.TotalAttempts
	}
	assert.EqualValues(t, 1, n, "only the new session's attempt: the hosts started from a clean slate")
}
