package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute/internal/report"
)

// smallRun is a short run on a 3-node embedded cluster.
var smallRun = []string{"-nodes", "3", "-records", "50", "-threads", "4", "-scenario", "steady", "-plots=false", "-hdr=false"}

// TestJSONToStdout: with -json - stdout is the JSON document only (a
// single policy's YCSB summary and the table go to stderr).
func TestJSONToStdout(t *testing.T) {
	var out, errb bytes.Buffer
	args := append([]string{"-compare", "token-aware", "-ops", "100", "-target", "500", "-json", "-", "-out", t.TempDir()}, smallRun...)
	code := run(context.Background(), args, &out, &errb)
	require.Equal(t, exitOK, code, errb.String())
	var rep report.Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep), "stdout:\n%s", out.String())
	require.Len(t, rep.Results, 1)
	assert.Equal(t, "token-aware", rep.Results[0].Policy)
	assert.EqualValues(t, 100, rep.Results[0].Operations)
	assert.Contains(t, errb.String(), "token-aware", "the table goes to stderr")
}

// TestBadOutRejectedFirst: an -out that cannot be a directory is a flag
// error (exit 2, naming -out) before any cluster starts or data loads.
func TestBadOutRejectedFirst(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "notadir")
	require.NoError(t, os.WriteFile(notDir, []byte("x"), 0o644))
	for _, c := range []struct{ args []string }{
		{[]string{"-out", filepath.Join(notDir, "sub")}},
		{[]string{"-out", dir, "-json", filepath.Join(dir, "missing", "r.json")}},
		{[]string{"-out", dir, "-json", dir}},
	} {
		var out, errb bytes.Buffer
		start := time.Now()
		code := run(context.Background(), append(append([]string{"-records", "50", "-ops", "200", "-nodes", "3", "-target", "1000"}, c.args...), "-s"), &out, &errb)
		elapsed := time.Since(start)
		assert.Equal(t, exitUsage, code, "%v: %s", c.args, errb.String())
		flagName := c.args[len(c.args)-2]
		assert.Contains(t, errb.String(), flagName+" ", "%v: the flag is named", c.args)
		assert.Empty(t, out.String(), "%v: nothing ran", c.args)
		assert.NotContains(t, errb.String(), "operations", "%v: no load or run status", c.args)
		assert.Less(t, elapsed, time.Second, "%v: rejected before the load", c.args)
	}
}

// TestTruncatedRunMarked: a run cut short by -duration is marked in the
// table, the report (truncated, operations asked and done) and the last
// status line.
func TestTruncatedRunMarked(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	args := append([]string{"-compare", "token-aware", "-ops", "100000", "-target", "200", "-duration", "1s", "-s", "-status-interval", "10s", "-out", dir}, smallRun...)
	code := run(context.Background(), args, &out, &errb)
	require.Equal(t, exitOK, code, errb.String())
	rep := readReport(t, dir)
	require.Len(t, rep.Results, 1)
	res := rep.Results[0]
	assert.True(t, res.Truncated, "report: truncated")
	assert.EqualValues(t, 100000, res.OperationsAsked)
	assert.Less(t, res.Operations, int64(100000))
	assert.Positive(t, res.Operations)
	assert.Contains(t, out.String(), "token-aware*", "table row marked")
	assert.Contains(t, out.String(), "* token-aware: truncated by the time limit after", "table footnote")
	assert.Contains(t, errb.String(), "operations, truncated by the time limit;", "last status line")
	assert.NotContains(t, errb.String(), "operations, done;")

	// A complete run is not marked.
	dir = t.TempDir()
	out.Reset()
	errb.Reset()
	args = append([]string{"-compare", "token-aware", "-ops", "50", "-target", "500", "-s", "-out", dir}, smallRun...)
	require.Equal(t, exitOK, run(context.Background(), args, &out, &errb), errb.String())
	res = readReport(t, dir).Results[0]
	assert.False(t, res.Truncated)
	assert.False(t, strings.Contains(out.String(), "token-aware*"))
	assert.Contains(t, errb.String(), "operations, done;")
}
