package policy

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute/internal/simtest"
	"github.com/tailroute/tailroute/sim"
)

// warnRecorder is a driver logger that keeps its warnings.
type warnRecorder struct {
	quietLogger
	mu    sync.Mutex
	warns []string
}

func (l *warnRecorder) Warning(msg string, f ...gocql.LogField) {
	l.mu.Lock()
	l.warns = append(l.warns, fmt.Sprint(msg, f))
	l.mu.Unlock()
}

func (l *warnRecorder) find(sub string) (out []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range l.warns {
		if strings.Contains(w, sub) {
			out = append(out, w)
		}
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
	log := &warnRecorder{}
	cfg := gocql.NewCluster(c.Hosts()...)
	cfg.Port = c.Port()
	cfg.Timeout = 5 * time.Second
	cfg.ConnectTimeout = 10 * time.Second
	cfg.Logger = log
	require.NoError(t, Wire(cfg, p))
	s1, err := cfg.CreateSession()
	require.NoError(t, err)
	defer s1.Close()
	createKeyspace(t, s1, p, "shared", "{'class':'SimpleStrategy','replication_factor':2}")
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
