package policy

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/assert"
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

func (l *warnRecorder) find(sub string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, w := range l.warns {
		if strings.Contains(w, sub) {
			out = append(out, w)
		}
	}
	return out
}

// TestSecondSessionRefused: a second session on the same policy while the
// first is open is refused: the first keeps being served (reads and
// writes), the second gets no hosts, the refusal is logged with the fix and
// returned by Err.
func TestSecondSessionRefused(t *testing.T) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 6, Model: sim.ServiceModel{ZeroService: true}})
	p, err := New()
	require.NoError(t, err)
	log := &warnRecorder{}
	cfg := gocql.NewCluster(c.Hosts()...)
	cfg.Port = c.Port()
	cfg.Timeout = 5 * time.Second
	cfg.ConnectTimeout = 10 * time.Second
	cfg.ReconnectInterval = 200 * time.Millisecond
	cfg.Logger = log
	require.NoError(t, Wire(cfg, p))
	s1, err := cfg.CreateSession()
	require.NoError(t, err)
	defer s1.Close()
	createKeyspace(t, s1, p, "shared", "{'class':'SimpleStrategy','replication_factor':2}")
	require.NoError(t, s1.Query("INSERT INTO shared.usertable (y_id, field0) VALUES ('a', 'b')").Exec())
	require.NoError(t, p.Err())

	s2, err := cfg.CreateSession()
	require.NoError(t, err, "the driver's Init cannot refuse: the second session is created")
	defer s2.Close()
	err = p.Err()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "second gocql.Session")
	lines := log.find("second gocql.Session")
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], "give each session its own Policy", "the log line says how to fix it")

	require.NoError(t, s1.Query("INSERT INTO shared.usertable (y_id, field0) VALUES ('a', 'c')").Exec(), "the first session keeps working")
	for range 20 {
		var v string
		require.NoError(t, s1.Query("SELECT field0 FROM shared.usertable WHERE y_id = 'a'").Scan(&v), "the first session keeps serving reads")
		assert.Equal(t, "c", v)
	}
	var v string
	assert.ErrorIs(t, s2.Query("SELECT field0 FROM shared.usertable WHERE y_id = 'a'").Scan(&v), gocql.ErrNoConnections, "the second session gets no hosts")
	assert.Len(t, p.Stats(), 3, "the first session's hosts are kept")
	s2.Close()
	require.NoError(t, s1.Query("SELECT field0 FROM shared.usertable WHERE y_id = 'a'").Scan(&v), "closing the second session leaves the first alone")
}
