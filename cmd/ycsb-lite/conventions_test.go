package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute/sim"
)

func TestVersionFlag(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, exitOK, run(context.Background(), []string{"-version"}, &out, &errb), errb.String())
	assert.True(t, strings.HasPrefix(out.String(), "ycsb-lite "), out.String())
	assert.Contains(t, out.String(), runtime.Version())
	assert.Contains(t, out.String(), "github.com/gocql/gocql@")
}

// TestReplicationFlag: -replication makes a NetworkTopologyStrategy
// keyspace with the DCs' replica counts; bad values are flag errors.
func TestReplicationFlag(t *testing.T) {
	o, err := parseFlags([]string{"-nodes", "5", "-dcs", "2", "-replication", "dc1:3,dc2:2"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "{'class': 'NetworkTopologyStrategy', 'dc1': 3, 'dc2': 2}", o.replicationMap())
	o, err = parseFlags([]string{"-hosts", "10.0.0.1", "-replication", "east:3,west:3"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "{'class': 'NetworkTopologyStrategy', 'east': 3, 'west': 3}", o.replicationMap())
	o, err = parseFlags([]string{"-hosts", "10.0.0.1", "-rf", "2"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "{'class': 'SimpleStrategy', 'replication_factor': 2}", o.replicationMap())
	for _, args := range [][]string{
		{"-nodes", "5", "-dcs", "2", "-replication", "dc1:4"}, // dc1 has 3 nodes
		{"-nodes", "5", "-dcs", "2", "-replication", "dc3:1"}, // no such DC
		{"-nodes", "5", "-replication", "dc1:0"},              // replicas >= 1
		{"-nodes", "5", "-replication", "dc1:1,dc1:1"},        // twice
		{"-nodes", "5", "-replication", "dc1"},                // no count
		{"-nodes", "5", "-replication", "dc1:1", "-rf", "1"},  // exclusive
		{"-drop-keyspace"}, // embedded cluster
		{"-hosts", "10.0.0.1", "-replication", "d'c:1"}, // quoting
	} {
		_, err := parseFlags(args, io.Discard)
		var fe *flagError
		if assert.ErrorAs(t, err, &fe, "%v", args) {
			assert.True(t, strings.Contains(err.Error(), "-replication") || strings.Contains(err.Error(), "-drop-keyspace"), "%v: %v", args, err)
		}
	}
}

// TestHostsWarmupReplicationDrop runs against a 2-DC cluster given by
// -hosts: -replication creates the keyspace with NetworkTopologyStrategy,
// -warmup runs unmeasured operations before the measured ones, the HDR
// files come per operation type beside the totals, and -drop-keyspace
// drops the keyspace the run created (and keeps one that existed).
func TestHostsWarmupReplicationDrop(t *testing.T) {
	cl, err := sim.Start(context.Background(), sim.Config{Nodes: 4, DCs: 2, Seed: 3, Model: sim.ServiceModel{Workers: 4, MeanService: time.Millisecond}})
	require.NoError(t, err)
	defer cl.Close()
	dir := t.TempDir()
	var out, errb bytes.Buffer
	args := []string{"-hosts", strings.Join(cl.Hosts(), ","), "-port", fmt.Sprint(cl.Port()), "-compare", "token-aware",
		"-replication", "dc1:2,dc2:1", "-keyspace", "ycsb_nts", "-drop-keyspace", "-warmup", "150",
		"-records", "100", "-ops", "200", "-target", "400", "-threads", "4", "-out", dir, "-plots=false", "-s"}
	require.Equal(t, exitOK, run(context.Background(), args, &out, &errb), errb.String())
	rep := readReport(t, dir)
	require.Len(t, rep.Results, 1)
	assert.EqualValues(t, 200, rep.Results[0].Operations, "the warm-up is not measured")
	assert.Contains(t, rep.Cluster, "replication dc1:2,dc2:1")
	assert.Contains(t, errb.String(), "[token-aware] warm-up: 150 operations")
	var served uint64
	for _, n := range cl.Nodes() {
		served += n.Stats().Served
	}
	assert.EqualValues(t, 100+150+200, served, "load, warm-up and run reached the cluster")

	// HDR per operation type: the operations of each add up to the total.
	var perOp int64
	for _, op := range []string{"READ", "UPDATE"} {
		_, n := checkHgrm(t, filepath.Join(dir, "token-aware-run-"+op+".hgrm"))
		perOp += n
	}
	_, total := checkHgrm(t, filepath.Join(dir, "token-aware-run.hgrm"))
	assert.Equal(t, total, perOp)
	assert.EqualValues(t, 200, total)
	_, err = os.Stat(filepath.Join(dir, "token-aware-run-INSERT.hgrm"))
	assert.True(t, os.IsNotExist(err), "no file for an operation type that did not run")

	s := simSessionV1(t, cl)
	_, err = s.KeyspaceMetadata("ycsb_nts")
	assert.ErrorIs(t, err, gocql.ErrKeyspaceDoesNotExist, "the keyspace the run created is dropped")
	assert.Contains(t, errb.String(), "dropped keyspace ycsb_nts")

	// A keyspace that existed before the run is kept.
	require.NoError(t, s.Query("CREATE KEYSPACE kept WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}").Exec())
	args = []string{"-hosts", strings.Join(cl.Hosts(), ","), "-port", fmt.Sprint(cl.Port()), "-compare", "token-aware",
		"-keyspace", "kept", "-drop-keyspace", "-records", "20", "-ops", "20", "-target", "400", "-threads", "2", "-out", t.TempDir(), "-plots=false"}
	out.Reset()
	errb.Reset()
	require.Equal(t, exitOK, run(context.Background(), args, &out, &errb), errb.String())
	require.NoError(t, s.AwaitSchemaAgreement(context.Background()))
	_, err = s.KeyspaceMetadata("kept")
	assert.NoError(t, err, "a keyspace that existed is not dropped")
}

func simSessionV1(t *testing.T, cl *sim.Cluster) *gocql.Session {
	t.Helper()
	cfg := gocql.NewCluster(cl.Hosts()...)
	cfg.Port = cl.Port()
	cfg.Timeout = 5 * time.Second
	cfg.ConnectTimeout = 10 * time.Second
	s, err := cfg.CreateSession()
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

// TestBaseline: -baseline prints each policy's p50, p99, p99.9 and ops/s
// against an earlier report, with the change; a bad path is a flag error.
func TestBaseline(t *testing.T) {
	old := t.TempDir()
	args := append([]string{"-compare", "token-aware,round-robin", "-ops", "100", "-target", "500"}, smallRun...)
	var out, errb bytes.Buffer
	require.Equal(t, exitOK, run(context.Background(), append(args, "-out", old), &out, &errb), errb.String())

	out.Reset()
	errb.Reset()
	args = append([]string{"-compare", "token-aware,host-pool", "-ops", "100", "-target", "500"}, smallRun...)
	require.Equal(t, exitOK, run(context.Background(), append(args, "-out", t.TempDir(), "-baseline", old), &out, &errb), errb.String())
	text := out.String()
	require.Contains(t, text, "against baseline "+old)
	after := text[strings.Index(text, "against baseline"):]
	for _, m := range []string{"p50 ms", "p99 ms", "p99.9 ms", "ops/s", "%"} {
		assert.Contains(t, after, m)
	}
	assert.Contains(t, after, "token-aware")
	assert.Contains(t, after, "not in the baseline: host-pool")
	assert.Contains(t, after, "only in the baseline: round-robin")

	var fe *flagError
	_, err := parseFlags([]string{"-baseline", filepath.Join(old, "missing.json")}, io.Discard)
	assert.ErrorAs(t, err, &fe)
	assert.ErrorContains(t, err, "-baseline")
}
