package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWorkloadPrecedence: every property ycsb-lite reads follows YCSB's
// order: a flag given on the command line, then -p, then the -P files
// (later over earlier), then the built-in defaults (the flags' defaults).
func TestWorkloadPrecedence(t *testing.T) {
	dir := t.TempDir()
	first, second := filepath.Join(dir, "first"), filepath.Join(dir, "second")
	require.NoError(t, os.WriteFile(first, []byte("recordcount=40\noperationcount=200\nthreadcount=2\ntarget=50\nmaxexecutiontime=9\nstatus.interval=4\n"), 0o644))
	require.NoError(t, os.WriteFile(second, []byte("recordcount=50\noperationcount=300\nthreadcount=4\ntarget=100\nmaxexecutiontime=7\nstatus.interval=3\n"), 0o644))

	type got struct {
		records, ops int64
		threads      int
		target       float64
		maxTime      time.Duration
		status       time.Duration
	}
	read := func(t *testing.T, args ...string) got {
		t.Helper()
		o, err := parseFlags(append(args, "-s"), io.Discard)
		require.NoError(t, err)
		return got{o.cfg.RecordCount, o.cfg.OperationCount, o.cfg.Threads, o.cfg.Target, o.cfg.MaxExecutionTime, o.statusInterval}
	}
	fileVals := got{50, 300, 4, 100, 7 * time.Second, 3 * time.Second}
	t.Run("files over defaults, later file over earlier", func(t *testing.T) {
		assert.Equal(t, fileVals, read(t, "-P", first, "-P", second))
	})
	t.Run("-p over the files", func(t *testing.T) {
		assert.Equal(t, got{60, 400, 5, 200, 8 * time.Second, 2 * time.Second},
			read(t, "-P", first, "-P", second, "-p", "recordcount=60", "-p", "operationcount=400", "-p", "threadcount=5",
				"-p", "target=200", "-p", "maxexecutiontime=8", "-p", "status.interval=2"))
	})
	t.Run("flags given over -p and the files", func(t *testing.T) {
		assert.Equal(t, got{70, 500, 6, 300, 11 * time.Second, time.Second},
			read(t, "-P", second, "-p", "recordcount=60", "-p", "operationcount=400", "-p", "threadcount=5",
				"-p", "target=200", "-p", "maxexecutiontime=8", "-p", "status.interval=2",
				"-records", "70", "-ops", "500", "-threads", "6", "-target", "300", "-duration", "11s", "-status-interval", "1s"))
	})
	t.Run("flag defaults when no file sets a property", func(t *testing.T) {
		empty := filepath.Join(dir, "empty")
		require.NoError(t, os.WriteFile(empty, []byte("readproportion=1\nupdateproportion=0\n"), 0o644))
		g := read(t, "-P", empty)
		assert.Equal(t, int64(builtinOps), g.ops)
		assert.Equal(t, 32, g.threads)
		assert.Equal(t, 1000.0, g.target)
		assert.Equal(t, 10*time.Second, g.status)
		assert.Equal(t, 2*10*time.Second+5*time.Second, g.maxTime, "auto: twice the nominal run time plus 5s")
	})
	t.Run("YCSB's workload files as they are", func(t *testing.T) {
		g := read(t, "-P", "workloads/workloada")
		assert.Equal(t, int64(1000), g.ops, "YCSB's workloada says operationcount=1000")
		assert.Equal(t, int64(1000), g.records)
	})
	t.Run("the built-in -workload preset", func(t *testing.T) {
		g := read(t)
		assert.Equal(t, int64(builtinOps), g.ops, "the no-flag run: workload b, 10000 operations")
		assert.Equal(t, int64(1000), g.records)
	})
}
