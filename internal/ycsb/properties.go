package ycsb

import (
	"embed"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/magiconair/properties"
)

//go:embed workloads/workload?
var builtinFS embed.FS

// BuiltinWorkloads lists the embedded workload names, "a" to "f".
func BuiltinWorkloads() []string { return []string{"a", "b", "c", "d", "e", "f"} }

// Properties is a parsed Java .properties workload description.
type Properties map[string]string

// ParseProperties reads Java .properties syntax (comments, '=' or ':'
// separators, line continuations, unicode escapes). ${...} is not expanded,
// as in Java.
func ParseProperties(r io.Reader) (Properties, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	l := &properties.Loader{Encoding: properties.UTF8, DisableExpansion: true}
	p, err := l.LoadBytes(data)
	if err != nil {
		return nil, fmt.Errorf("workload properties: %w", err)
	}
	out := make(Properties, p.Len())
	for _, k := range p.Keys() {
		v, _ := p.Get(k)
		out[k] = v
	}
	return out, nil
}

// BuiltinProperties returns the embedded YCSB workload name ("a".."f",
// "workloada".."workloadf", case-insensitive).
func BuiltinProperties(name string) (Properties, error) {
	n := strings.TrimPrefix(strings.ToLower(name), "workload")
	if len(n) != 1 || n[0] < 'a' || n[0] > 'f' {
		return nil, fmt.Errorf("unknown built-in workload %q; allowed: a, b, c, d, e, f (or workloada..workloadf)", name)
	}
	f, err := builtinFS.Open("workloads/workload" + n)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseProperties(f)
}

// LoadProperties returns a built-in workload when name is one ("a" or
// "workloada"…), otherwise it reads the file at name.
func LoadProperties(name string) (Properties, error) {
	if p, err := BuiltinProperties(name); err == nil {
		return p, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("workload %q is neither a built-in (a..f) nor a readable file: %w", name, err)
	}
	defer f.Close()
	p, err := ParseProperties(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

// Merge returns p with every key of over set to over's value.
func (p Properties) Merge(over Properties) Properties {
	out := make(Properties, len(p)+len(over))
	for k, v := range p {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// Distribution names for requestdistribution and friends.
const (
	DistUniform  = "uniform"
	DistZipfian  = "zipfian"
	DistLatest   = "latest"
	DistHotspot  = "hotspot"
	DistConstant = "constant"
)

// Config is a validated YCSB core workload. Field comments give the
// property name and YCSB's default.
type Config struct {
	Table           string // table, default "usertable"
	RecordCount     int64  // recordcount, default 1000 here (YCSB: required)
	OperationCount  int64  // operationcount, default 1000; 0 = unbounded (stop by time or Ctrl-C)
	InsertStart     int64  // insertstart, default 0
	InsertCount     int64  // insertcount, default recordcount - insertstart
	FieldCount      int    // fieldcount, default 10
	FieldNamePrefix string // fieldnameprefix, default "field"
	FieldLength     int    // fieldlength, default 100
	MinFieldLength  int    // minfieldlength, default 1
	FieldLengthDist string // fieldlengthdistribution: constant (default), uniform, zipfian
	ReadAllFields   bool   // readallfields, default true
	WriteAllFields  bool   // writeallfields, default false

	ReadProportion            float64 // readproportion, default 0.95
	UpdateProportion          float64 // updateproportion, default 0.05
	InsertProportion          float64 // insertproportion, default 0
	ScanProportion            float64 // scanproportion, default 0
	ReadModifyWriteProportion float64 // readmodifywriteproportion, default 0

	RequestDist      string        // requestdistribution: uniform (default), zipfian, latest, hotspot
	HotspotDataFrac  float64       // hotspotdatafraction, default 0.2
	HotspotOpnFrac   float64       // hotspotopnfraction, default 0.8
	MinScanLength    int           // minscanlength, default 1
	MaxScanLength    int           // maxscanlength, default 1000
	ScanLengthDist   string        // scanlengthdistribution: uniform (default), zipfian
	OrderedInserts   bool          // insertorder=ordered; default hashed (false)
	ZeroPadding      int           // zeropadding, default 1
	Threads          int           // threadcount, default 1
	Target           float64       // target ops/s over all threads, default 0 = as fast as possible
	MaxExecutionTime time.Duration // maxexecutiontime in seconds, default 0 = no limit

	// Ignored lists property keys that YCSB's core workload and client do
	// not define here (DB-specific settings, typos); they have no effect.
	Ignored []string
}

// PropertyError is a bad workload property: which key, what value, what is allowed.
type PropertyError struct {
	Key, Value, Allowed string
	Reason              string
}

func (e *PropertyError) Error() string {
	return fmt.Sprintf("workload property %s=%q: %s; allowed: %s", e.Key, e.Value, e.Reason, e.Allowed)
}

// known keys (besides "workload", checked separately) and what they accept.
var knownKeys = map[string]bool{
	"table": true, "recordcount": true, "operationcount": true, "insertstart": true, "insertcount": true,
	"fieldcount": true, "fieldnameprefix": true, "fieldlength": true, "minfieldlength": true,
	"fieldlengthdistribution": true, "readallfields": true, "writeallfields": true,
	"readproportion": true, "updateproportion": true, "insertproportion": true, "scanproportion": true,
	"readmodifywriteproportion": true, "requestdistribution": true, "hotspotdatafraction": true,
	"hotspotopnfraction": true, "minscanlength": true, "maxscanlength": true, "scanlengthdistribution": true,
	"insertorder": true, "zeropadding": true, "threadcount": true, "target": true, "maxexecutiontime": true,
	"workload": true,
	// accepted with their default only
	"readallfieldsbyname": true, "dataintegrity": true,
}

var identRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,47}$`)

type propReader struct {
	p   Properties
	err error
}

func (r *propReader) str(key, def string) string {
	if v, ok := r.p[key]; ok {
		return strings.TrimSpace(v)
	}
	return def
}

func (r *propReader) fail(key, allowed, reason string) {
	if r.err == nil {
		r.err = &PropertyError{Key: key, Value: r.p[key], Allowed: allowed, Reason: reason}
	}
}

func (r *propReader) int64(key string, def, min, max int64) int64 {
	v, ok := r.p[key]
	if !ok {
		return def
	}
	allowed := fmt.Sprintf("an integer in [%d, %d]", min, max)
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		r.fail(key, allowed, "not an integer")
		return def
	}
	if n < min || n > max {
		r.fail(key, allowed, "out of range")
		return def
	}
	return n
}

func (r *propReader) float(key string, def, min, max float64) float64 {
	v, ok := r.p[key]
	if !ok {
		return def
	}
	allowed := fmt.Sprintf("a number in [%g, %g]", min, max)
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) {
		r.fail(key, allowed, "not a number")
		return def
	}
	if f < min || f > max {
		r.fail(key, allowed, "out of range")
		return def
	}
	return f
}

func (r *propReader) bool(key string, def bool) bool {
	v, ok := r.p[key]
	if !ok {
		return def
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true
	case "false":
		return false
	}
	r.fail(key, "true, false", "not a boolean")
	return def
}

func (r *propReader) oneOf(key, def string, allowed ...string) string {
	v := r.str(key, def)
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	r.fail(key, strings.Join(allowed, ", "), "unknown value")
	return def
}

// ParseConfig applies YCSB's defaults to p and validates every value; the
// first problem is returned as a *PropertyError.
func ParseConfig(p Properties) (Config, error) {
	r := &propReader{p: p}
	var c Config
	if w, ok := p["workload"]; ok {
		w = strings.TrimSpace(w)
		if w != "site.ycsb.workloads.CoreWorkload" && w != "com.yahoo.ycsb.workloads.CoreWorkload" && w != "core" {
			r.fail("workload", "site.ycsb.workloads.CoreWorkload", "only the core workload is implemented")
		}
	}
	c.Table = r.str("table", "usertable")
	if !identRE.MatchString(c.Table) {
		r.fail("table", "a CQL identifier (letter, then letters, digits, _)", "not a plain identifier")
	}
	c.RecordCount = r.int64("recordcount", 1000, 1, 1<<40)
	c.OperationCount = r.int64("operationcount", 1000, 0, 1<<50)
	c.InsertStart = r.int64("insertstart", 0, 0, c.RecordCount-1)
	c.InsertCount = r.int64("insertcount", c.RecordCount-c.InsertStart, 1, c.RecordCount-c.InsertStart)
	c.FieldCount = int(r.int64("fieldcount", 10, 1, 1024))
	c.FieldNamePrefix = r.str("fieldnameprefix", "field")
	if !identRE.MatchString(c.FieldNamePrefix) {
		r.fail("fieldnameprefix", "a CQL identifier (letter, then letters, digits, _)", "not a plain identifier")
	}
	c.FieldLength = int(r.int64("fieldlength", 100, 1, 1<<20))
	c.MinFieldLength = int(r.int64("minfieldlength", 1, 1, int64(c.FieldLength)))
	c.FieldLengthDist = r.oneOf("fieldlengthdistribution", DistConstant, DistConstant, DistUniform, DistZipfian)
	c.ReadAllFields = r.bool("readallfields", true)
	c.WriteAllFields = r.bool("writeallfields", false)
	if r.bool("readallfieldsbyname", false) {
		r.fail("readallfieldsbyname", "false", "not supported")
	}
	if r.bool("dataintegrity", false) {
		r.fail("dataintegrity", "false", "not supported")
	}

	c.ReadProportion = r.float("readproportion", 0.95, 0, 1)
	c.UpdateProportion = r.float("updateproportion", 0.05, 0, 1)
	c.InsertProportion = r.float("insertproportion", 0, 0, 1)
	c.ScanProportion = r.float("scanproportion", 0, 0, 1)
	c.ReadModifyWriteProportion = r.float("readmodifywriteproportion", 0, 0, 1)
	if r.err == nil && c.ReadProportion+c.UpdateProportion+c.InsertProportion+c.ScanProportion+c.ReadModifyWriteProportion <= 0 {
		r.err = &PropertyError{Key: "readproportion", Value: r.str("readproportion", "0.95"),
			Allowed: "at least one of readproportion, updateproportion, insertproportion, scanproportion, readmodifywriteproportion > 0",
			Reason:  "every operation proportion is 0"}
	}

	c.RequestDist = r.oneOf("requestdistribution", DistUniform, DistUniform, DistZipfian, DistLatest, DistHotspot)
	c.HotspotDataFrac = r.float("hotspotdatafraction", 0.2, 0, 1)
	c.HotspotOpnFrac = r.float("hotspotopnfraction", 0.8, 0, 1)
	c.MinScanLength = int(r.int64("minscanlength", 1, 1, 1<<20))
	c.MaxScanLength = int(r.int64("maxscanlength", 1000, int64(c.MinScanLength), 1<<20))
	c.ScanLengthDist = r.oneOf("scanlengthdistribution", DistUniform, DistUniform, DistZipfian)
	c.OrderedInserts = r.oneOf("insertorder", "hashed", "hashed", "ordered") == "ordered"
	c.ZeroPadding = int(r.int64("zeropadding", 1, 1, 64))
	c.Threads = int(r.int64("threadcount", 1, 1, 10000))
	c.Target = r.float("target", 0, 0, 1e9)
	c.MaxExecutionTime = time.Duration(r.int64("maxexecutiontime", 0, 0, 1<<31)) * time.Second
	if r.err == nil && c.RequestDist == DistLatest && c.RecordCount < 2 {
		r.fail("recordcount", "at least 2 with requestdistribution=latest", "too small")
	}
	if r.err != nil {
		return Config{}, r.err
	}
	for k := range p {
		if !knownKeys[k] {
			c.Ignored = append(c.Ignored, k)
		}
	}
	sort.Strings(c.Ignored)
	return c, nil
}

// DefaultConfig is YCSB's core workload with every property at its default.
func DefaultConfig() Config {
	c, err := ParseConfig(Properties{})
	if err != nil {
		panic(err) // defaults are valid by construction
	}
	return c
}
