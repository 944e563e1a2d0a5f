package sim

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// systemPython is the interpreter with Debian's python3-cassandra (the
// DataStax Python driver); not a pyenv or virtualenv python.
const systemPython = "/usr/bin/python3"

// pyDriver is testdata/pydriver.py running under systemPython.
type pyDriver struct {
	t      *testing.T
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr *lockedWriter
}

// lockedWriter collects a process's stderr while the test reads it.
type lockedWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// startPyDriver starts the Python driver script, or skips the test when
// the driver is not installed (fails instead with TAILROUTE_REQUIRE_PYTHON=1,
// as CI sets it).
func startPyDriver(t *testing.T) *pyDriver {
	t.Helper()
	if out, err := exec.Command(systemPython, "-c", "import cassandra").CombinedOutput(); err != nil {
		msg := fmt.Sprintf("the DataStax Python driver is not available under %s (apt-get install python3-cassandra): %v %s",
			systemPython, err, out)
		if os.Getenv("TAILROUTE_REQUIRE_PYTHON") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	cmd := exec.Command(systemPython, "testdata/pydriver.py")
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	p := &pyDriver{t: t, in: in, out: bufio.NewScanner(out), stderr: &lockedWriter{}}
	p.out.Buffer(nil, 16<<20)
	cmd.Stderr = p.stderr
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		in.Close()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("python driver stderr:\n%s", p.stderr.String())
		}
	})
	return p
}

// call sends one command and decodes its answer into out.
func (p *pyDriver) call(out any, req map[string]any) {
	p.t.Helper()
	b, err := json.Marshal(req)
	require.NoError(p.t, err)
	_, err = p.in.Write(append(b, '\n'))
	require.NoError(p.t, err)
	require.True(p.t, p.out.Scan(), "python driver exited: %v\n%s", p.out.Err(), p.stderr.String())
	var e struct{ Error string }
	require.NoError(p.t, json.Unmarshal(p.out.Bytes(), &e))
	require.Empty(p.t, e.Error, "python driver: %s", e.Error)
	require.NoError(p.t, json.Unmarshal(p.out.Bytes(), out))
}

// TestPythonDriver runs the DataStax Python driver, a client nobody here
// wrote, against a 3-node cluster: it connects (negotiating the protocol
// version down to v4 by itself), reads rows gocql wrote (by
// key, prepared, and by a paged table scan of more rows than its fetch
// size), gets the documented answer to tracing, and sees a stopped node
// go down promptly and come back after a restart, cycle after cycle.
func TestPythonDriver(t *testing.T) {
	py := startPyDriver(t)
	c := startCluster(t, Config{Nodes: 3, Model: ServiceModel{ZeroService: true}})
	createYCSB(t, c, "ycsb", "{'class':'SimpleStrategy','replication_factor':2}", 1)
	s := newSession(t, c, "ycsb", true)
	const rows = 250
	for i := 0; i < rows; i++ {
		k := fmt.Sprintf("user%03d", i)
		require.NoError(t, s.Query("INSERT INTO usertable (y_id, field0) VALUES (?, ?)", k, "v"+k).Exec())
	}

	var conn struct {
		Hosts    []string
		Control  string
		Protocol int
	}
	py.call(&conn, map[string]any{"cmd": "connect", "hosts": c.Hosts()[:1], "port": c.Port(), "keyspace": "ycsb"})
	assert.Equal(t, c.Hosts(), conn.Hosts, "peers discovered from system.peers")
	assert.Equal(t, 4, conn.Protocol, "protocol version the driver negotiated")

	var get struct{ Value *string }
	py.call(&get, map[string]any{"cmd": "get", "key": "user042"})
	require.NotNil(t, get.Value)
	assert.Equal(t, "vuser042", *get.Value)

	var scan struct {
		Rows  [][]string
		Pages int
	}
	py.call(&scan, map[string]any{"cmd": "scan", "query": "SELECT y_id, field0 FROM usertable", "fetch_size": 40})
	assert.Equal(t, 7, scan.Pages, "250 rows in pages of 40")
	seen := map[string]int{}
	for _, r := range scan.Rows {
		seen[r[0]]++
		assert.Equal(t, "v"+r[0], r[1])
	}
	assert.Len(t, seen, rows, "every row")
	for k, n := range seen {
		assert.Equal(t, 1, n, "row %s returned %d times", k, n)
	}

	var tr struct {
		Rows     [][]string
		Trace    *string
		Warnings []string
	}
	py.call(&tr, map[string]any{"cmd": "trace", "query": "SELECT y_id, field0 FROM usertable WHERE y_id = 'user007'"})
	assert.Equal(t, [][]string{{"user007", "vuser007"}}, tr.Rows)
	assert.Nil(t, tr.Trace, "no trace recorded")
	assert.Equal(t, []string{tracingWarning}, tr.Warnings)

	// stop cycles on a node that does not hold the driver's control
	// connection; the driver must see it down within 3s (DownDelay 500ms)
	var victim *Node
	for _, n := range c.Nodes() {
		if n.IP() != conn.Control {
			victim = n
		}
	}
	var downs []float64
	for cycle := 0; cycle < 6; cycle++ {
		var w struct {
			OK      bool
			Elapsed float64
		}
		require.NoError(t, victim.Stop())
		py.call(&w, map[string]any{"cmd": "wait", "ip": victim.IP(), "up": false, "timeout": 3})
		require.True(t, w.OK, "cycle %d: the driver still holds %s up %.1fs after Stop", cycle, victim.IP(), w.Elapsed)
		downs = append(downs, w.Elapsed)
		require.NoError(t, victim.Restart())
		py.call(&w, map[string]any{"cmd": "wait", "ip": victim.IP(), "up": true, "timeout": 15})
		require.True(t, w.OK, "cycle %d: %s not up again %.1fs after Restart", cycle, victim.IP(), w.Elapsed)
	}
	sort.Float64s(downs)
	t.Logf("seconds from Stop to the driver marking the host down: %v", downs)
	py.call(&get, map[string]any{"cmd": "get", "key": "user199"})
	require.NotNil(t, get.Value)
	assert.Equal(t, "vuser199", *get.Value, "reads go on after the cycles")
}
