package ycsb

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuiltinWorkloads(t *testing.T) {
	type want struct {
		read, update, insert, scan, rmw float64
		dist                            string
		maxScan                         int
	}
	cases := map[string]want{
		"a": {0.5, 0.5, 0, 0, 0, DistZipfian, 1000},
		"b": {0.95, 0.05, 0, 0, 0, DistZipfian, 1000},
		"c": {1, 0, 0, 0, 0, DistZipfian, 1000},
		"d": {0.95, 0, 0.05, 0, 0, DistLatest, 1000},
		"e": {0, 0, 0.05, 0.95, 0, DistZipfian, 100},
		"f": {0.5, 0, 0, 0, 0.5, DistZipfian, 1000},
	}
	for _, name := range BuiltinWorkloads() {
		p, err := BuiltinProperties("workload" + strings.ToUpper(name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c, err := ParseConfig(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		w := cases[name]
		got := want{c.ReadProportion, c.UpdateProportion, c.InsertProportion, c.ScanProportion, c.ReadModifyWriteProportion, c.RequestDist, c.MaxScanLength}
		if got != w {
			t.Errorf("workload %s = %+v, want %+v", name, got, w)
		}
		if c.RecordCount != 1000 || c.OperationCount != 1000 || c.FieldCount != 10 || c.FieldLength != 100 || !c.ReadAllFields || c.OrderedInserts {
			t.Errorf("workload %s core defaults wrong: %+v", name, c)
		}
		if len(c.Ignored) != 0 {
			t.Errorf("workload %s: ignored keys %v", name, c.Ignored)
		}
		if _, err := NewWorkload(c); err != nil {
			t.Errorf("workload %s: %v", name, err)
		}
	}
	if _, err := BuiltinProperties("g"); err == nil || !strings.Contains(err.Error(), "a, b, c, d, e, f") {
		t.Errorf("unknown built-in: %v", err)
	}
}

func TestParseJavaPropertiesSyntax(t *testing.T) {
	src := "# comment\n! also a comment\nrecordcount : 500\noperationcount=\\\n  2000\nrequestdistribution hotspot\ntable=${x}\ncassandra.hosts=127.0.0.1\n"
	p, err := ParseProperties(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseConfig(p)
	if err == nil {
		t.Fatalf("table ${x} accepted: %+v", c)
	}
	delete(p, "table")
	c, err = ParseConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	if c.RecordCount != 500 || c.OperationCount != 2000 || c.RequestDist != DistHotspot {
		t.Fatalf("parsed %+v", c)
	}
	if len(c.Ignored) != 1 || c.Ignored[0] != "cassandra.hosts" {
		t.Fatalf("ignored = %v", c.Ignored)
	}
}

func TestLoadPropertiesFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "w.properties")
	if err := os.WriteFile(f, []byte("readproportion=0.7\nupdateproportion=0.3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := LoadProperties(f)
	if err != nil {
		t.Fatal(err)
	}
	if p["readproportion"] != "0.7" {
		t.Fatalf("got %v", p)
	}
	if p, err := LoadProperties("B"); err != nil || p["readproportion"] != "0.95" {
		t.Fatalf("built-in b: %v %v", p, err)
	}
	_, err = LoadProperties(filepath.Join(dir, "missing"))
	if err == nil || !strings.Contains(err.Error(), "neither a built-in") {
		t.Fatalf("missing file: %v", err)
	}
}

func TestBadPropertiesRejected(t *testing.T) {
	cases := []struct {
		key, value string
		want       []string // substrings of the message
	}{
		{"readproportion", "abc", []string{"readproportion", `"abc"`, "not a number", "[0, 1]"}},
		{"readproportion", "1.5", []string{"readproportion", `"1.5"`, "out of range", "[0, 1]"}},
		{"updateproportion", "-0.1", []string{"updateproportion", "out of range"}},
		{"requestdistribution", "pareto", []string{"requestdistribution", `"pareto"`, "uniform, zipfian, latest, hotspot"}},
		{"recordcount", "0", []string{"recordcount", `"0"`, "out of range", "[1,"}},
		{"recordcount", "ten", []string{"recordcount", "not an integer"}},
		{"fieldcount", "0", []string{"fieldcount", "[1, 1024]"}},
		{"fieldlengthdistribution", "histogram", []string{"fieldlengthdistribution", "constant, uniform, zipfian"}},
		{"readallfields", "yes", []string{"readallfields", `"yes"`, "true, false"}},
		{"insertorder", "random", []string{"insertorder", "hashed, ordered"}},
		{"scanlengthdistribution", "latest", []string{"scanlengthdistribution", "uniform, zipfian"}},
		{"workload", "site.ycsb.workloads.TimeSeriesWorkload", []string{"workload", "CoreWorkload"}},
		{"threadcount", "0", []string{"threadcount", "[1, 10000]"}},
		{"target", "-5", []string{"target", "out of range"}},
		{"hotspotdatafraction", "2", []string{"hotspotdatafraction", "[0, 1]"}},
		{"dataintegrity", "true", []string{"dataintegrity", "not supported"}},
	}
	for _, c := range cases {
		_, err := ParseConfig(Properties{c.key: c.value})
		if err == nil {
			t.Errorf("%s=%s accepted", c.key, c.value)
			continue
		}
		var pe *PropertyError
		if !errors.As(err, &pe) || pe.Key != c.key {
			t.Errorf("%s=%s: error %v is not a PropertyError for that key", c.key, c.value, err)
		}
		for _, s := range c.want {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s=%s: message %q lacks %q", c.key, c.value, err, s)
			}
		}
	}
	// Cross-field rules.
	if _, err := ParseConfig(Properties{"readproportion": "0", "updateproportion": "0"}); err == nil || !strings.Contains(err.Error(), "every operation proportion is 0") {
		t.Errorf("all-zero proportions: %v", err)
	}
	if _, err := ParseConfig(Properties{"minscanlength": "10", "maxscanlength": "5"}); err == nil || !strings.Contains(err.Error(), "maxscanlength") {
		t.Errorf("max < min scan: %v", err)
	}
	if _, err := ParseConfig(Properties{"recordcount": "100", "insertstart": "50", "insertcount": "60"}); err == nil || !strings.Contains(err.Error(), "insertcount") {
		t.Errorf("insertstart+insertcount > recordcount: %v", err)
	}
	if _, err := ParseConfig(Properties{"recordcount": "1", "requestdistribution": "latest"}); err == nil {
		t.Errorf("latest with 1 record accepted")
	}
	if _, err := ParseProperties(strings.NewReader("a=\\u12")); err == nil {
		t.Errorf("bad unicode escape accepted")
	}
}

func TestOperationProportions(t *testing.T) {
	for _, name := range []string{"a", "b", "f"} {
		p, _ := BuiltinProperties(name)
		c, _ := ParseConfig(p)
		w, err := NewWorkload(c)
		if err != nil {
			t.Fatal(err)
		}
		th := w.NewThread(1, 0)
		const draws = 100_000
		got := map[OpType]int{}
		for i := 0; i < draws; i++ {
			got[w.NextOp(th.R)]++
		}
		want := map[OpType]float64{OpRead: c.ReadProportion, OpUpdate: c.UpdateProportion, OpInsert: c.InsertProportion,
			OpScan: c.ScanProportion, OpReadModifyWrite: c.ReadModifyWriteProportion}
		for op, p := range want {
			if f := float64(got[op]) / draws; math.Abs(f-p) > 0.01 {
				t.Errorf("workload %s %v: %.3f, want %.2f", name, op, f, p)
			}
		}
	}
	// Proportions that do not sum to 1 are normalized, as YCSB does.
	c, err := ParseConfig(Properties{"readproportion": "0.3", "updateproportion": "0.1"})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := NewWorkload(c)
	th := w.NewThread(2, 0)
	reads := 0
	for i := 0; i < 100_000; i++ {
		if w.NextOp(th.R) == OpRead {
			reads++
		}
	}
	if f := float64(reads) / 100_000; math.Abs(f-0.75) > 0.01 {
		t.Errorf("normalized read share %.3f, want 0.75", f)
	}
}

func TestWorkloadKeysAndValues(t *testing.T) {
	c, _ := ParseConfig(Properties{"recordcount": "100", "requestdistribution": "zipfian", "fieldlength": "20",
		"readallfields": "false", "fieldlengthdistribution": "uniform", "minfieldlength": "5"})
	w, err := NewWorkload(c)
	if err != nil {
		t.Fatal(err)
	}
	th := w.NewThread(1, 0)
	for i := 0; i < 10_000; i++ {
		if k := w.NextKeynum(th.R); k < 0 || k > 99 {
			t.Fatalf("key number %d outside loaded records [0,99]", k)
		}
	}
	vals := th.AllValues()
	if len(vals) != 10 || vals[0].Name != "field0" || vals[9].Name != "field9" {
		t.Fatalf("values %v", vals)
	}
	for _, v := range vals {
		if len(v.Value) < 5 || len(v.Value) > 20 {
			t.Fatalf("value length %d outside [5,20]", len(v.Value))
		}
	}
	if f := th.ReadFields(); len(f) != 1 || !strings.HasPrefix(f[0], "field") {
		t.Fatalf("read fields %v", f)
	}
	if u := th.UpdateValues(); len(u) != 1 {
		t.Fatalf("update values %v", u)
	}
	if w.KeyName(0) != "user6284781860667377211" {
		t.Fatalf("key 0 = %s", w.KeyName(0))
	}
}
