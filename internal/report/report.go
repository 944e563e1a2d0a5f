package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/tailroute/tailroute/internal/ycsb"
)

// NodeLoad is one node's part in a run.
type NodeLoad struct {
	Host string `json:"host"`
	// Requests is how many operations the client sent to this node as
	// coordinator (counted by the driver's query observer).
	Requests int64   `json:"requests"`
	Share    float64 `json:"share"` // Requests / all requests
	// Windows are the requests the node executed successfully per 100 ms
	// during the run phase (simulated clusters only; as the simulator
	// counts them: a read that a non-replica coordinator forwarded counts
	// on the replica that executed it, not on the coordinator).
	Windows []uint64 `json:"windows_100ms,omitempty"`
	Served  uint64   `json:"served,omitempty"` // sum of Windows
}

// PercentilePoint is one point of a latency-by-percentile curve.
type PercentilePoint struct {
	Percentile float64 `json:"percentile"`
	LatencyUs  int64   `json:"latency_us"`
}

// PolicyResult is the outcome of one policy's run.
type PolicyResult struct {
	Policy     string            `json:"policy"`
	Operations int64             `json:"operations"`
	Errors     int64             `json:"errors"`
	Throughput float64           `json:"throughput_ops_per_sec"`
	Latency    ycsb.LatencyStats `json:"latency"` // every top-level operation; intended-time when Report.Intended
	// SlowOps counts the operations slower than Report.SlowMs (the
	// latency of Latency): unlike p99 it has no step where about 1 % of
	// operations are caught in stalls.
	SlowOps     int64             `json:"slow_ops"`
	Percentiles []PercentilePoint `json:"percentiles,omitempty"`
	Nodes       []NodeLoad        `json:"nodes"`
	// Busiest is the node that served most requests during the run, with
	// the median and 99th percentile of its requests per 100 ms (C3 Figure 8).
	Busiest       string             `json:"busiest_node,omitempty"`
	BusiestMedian float64            `json:"busiest_median_per_100ms,omitempty"`
	BusiestP99    float64            `json:"busiest_p99_per_100ms,omitempty"`
	Series        []ycsb.SeriesPoint `json:"latency_series,omitempty"`
	Run           ycsb.Result        `json:"run"`
	Extra         []ycsb.Result      `json:"extra_workloads,omitempty"` // e.g. the update-heavy workload of workload-shift
	// Interrupted: stopped by Ctrl-C before all operations were done;
	// Truncated: stopped by the time limit (-duration, maxexecutiontime).
	// Either way Operations of OperationsAsked were done.
	Interrupted     bool   `json:"interrupted,omitempty"`
	Truncated       bool   `json:"truncated,omitempty"`
	OperationsAsked int64  `json:"operations_asked,omitempty"` // 0 = unbounded
	Note            string `json:"note,omitempty"`
	// PolicyStats is the policy's own per-host view at the end of the run
	// (tailroute's policy.Stats; a hedged policy's "hedging" counters), when
	// it has one, as JSONView writes it (snake_case, units in the names).
	PolicyStats any `json:"policy_stats,omitempty"`
	// ClientOps are the operations each client completed, in client order
	// (one entry per client of Report.Clients).
	ClientOps []int64 `json:"clients_ops,omitempty"`
	// ErrorsByKind counts the failed operations by error kind (overloaded,
	// unavailable, read_timeout, client_timeout, no_connection, ...).
	ErrorsByKind map[string]int64 `json:"errors_by_kind,omitempty"`
	// Fault is the fault node's share and recovery (error-node, recovering).
	Fault *FaultStats `json:"fault,omitempty"`
	// HedgeStats is what hedging did and cost (hedged policies only).
	HedgeStats *HedgeStats `json:"hedge_stats,omitempty"`
	// Zones is the traffic between zones (the embedded cluster with racks).
	Zones *ZoneStats `json:"zones,omitempty"`
}

// Report is one comparison (or a single-policy run).
type Report struct {
	Command    string  `json:"command,omitempty"`
	Scenario   string  `json:"scenario"`
	Workload   string  `json:"workload"`
	Cluster    string  `json:"cluster"` // e.g. "embedded sim, 5 nodes, RF 3"
	Threads    int     `json:"threads"`
	Target     float64 `json:"target_ops_per_sec"`
	Operations int64   `json:"operations"`
	Seed       int64   `json:"seed"`
	Intended   bool    `json:"intended"` // latencies measured from the intended start time
	// SlowMs is the latency above which an operation counts in
	// PolicyResult.SlowOps (ycsb-lite -slow); 0 in reports written before it.
	SlowMs  float64        `json:"slow_ms,omitempty"`
	Results []PolicyResult `json:"results"`

	// Clients is the number of independent clients (sessions, each with
	// its own policy instance) that shared the cluster; 0 is read as 1.
	Clients int `json:"clients"`
	// DemandSkew is "P/Q" when P % of the clients issued Q % of the
	// requests; "" = an even split.
	DemandSkew string `json:"demand_skew,omitempty"`
	// Utilization, when > 0, is the fraction of the cluster's average
	// service capacity the Target was derived from.
	Utilization float64 `json:"utilization,omitempty"`
}

// Percentiles samples h (µs) on a log "nines" scale from the 0th to beyond
// the 99.99th percentile, for latency-by-percentile plots.
func Percentiles(h *hdrhistogram.Histogram) []PercentilePoint {
	n := h.TotalCount()
	if n == 0 {
		return nil
	}
	maxNines := math.Log10(float64(n))
	var out []PercentilePoint
	for x := 0.0; x <= maxNines+1e-9; x += 0.05 {
		p := 100 * (1 - math.Pow(10, -x))
		out = append(out, PercentilePoint{p, h.ValueAtQuantile(p)})
	}
	out = append(out, PercentilePoint{100, h.Max()})
	return out
}

// WindowQuantiles returns the median and 99th percentile (nearest rank) of
// per-window request counts.
func WindowQuantiles(w []uint64) (median, p99 float64) {
	if len(w) == 0 {
		return 0, 0
	}
	s := append([]uint64(nil), w...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(s)))) - 1
		if i < 0 {
			i = 0
		}
		return float64(s[i])
	}
	return rank(0.5), rank(0.99)
}

// FillBusiest sets Busiest/BusiestMedian/BusiestP99 from the nodes' windows.
func (r *PolicyResult) FillBusiest() {
	var best *NodeLoad
	for i := range r.Nodes {
		n := &r.Nodes[i]
		n.Served = 0
		for _, c := range n.Windows {
			n.Served += c
		}
		if len(n.Windows) > 0 && (best == nil || n.Served > best.Served) {
			best = n
		}
	}
	if best != nil {
		r.Busiest = best.Host
		r.BusiestMedian, r.BusiestP99 = WindowQuantiles(best.Windows)
	}
}

// FillShares computes each node's Share from Requests.
func (r *PolicyResult) FillShares() {
	var total int64
	for _, n := range r.Nodes {
		total += n.Requests
	}
	for i := range r.Nodes {
		if total > 0 {
			r.Nodes[i].Share = float64(r.Nodes[i].Requests) / float64(total)
		}
	}
}

func ms(us int64) string    { return fmt.Sprintf("%.2f", float64(us)/1000) }
func msf(us float64) string { return fmt.Sprintf("%.2f", us/1000) }

// slowHeader names the slow-operations column: "> 50ms".
func (r *Report) slowHeader() string {
	if r.SlowMs <= 0 {
		return "slow"
	}
	return "> " + (time.Duration(r.SlowMs * float64(time.Millisecond))).String()
}

// slowShare is the share of res's operations slower than Report.SlowMs.
func slowShare(res PolicyResult) string {
	if res.Operations == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f%%", 100*float64(res.SlowOps)/float64(res.Operations))
}

// WriteTable prints the human comparison table.
func (r *Report) WriteTable(w io.Writer) error {
	src := "actual service time"
	if r.Intended {
		src = "from intended start (no coordinated omission)"
	}
	target := "unthrottled"
	if r.Target > 0 {
		target = fmt.Sprintf("target %.0f ops/s", r.Target)
		if r.Utilization > 0 {
			target += fmt.Sprintf(" (utilization %.2f)", r.Utilization)
		}
	}
	threads := fmt.Sprintf("%d threads", r.Threads)
	if r.Clients > 1 {
		threads += fmt.Sprintf(" · %d clients", r.Clients)
		if r.DemandSkew != "" {
			threads += fmt.Sprintf(" (demand skew %s)", r.DemandSkew)
		}
	}
	if _, err := fmt.Fprintf(w, "scenario %s · workload %s · %s · %s · %s · %d ops · seed %d\nlatency in ms, %s; share = requests sent to each node as coordinator\n\n",
		r.Scenario, r.Workload, r.Cluster, threads, target, r.Operations, r.Seed, src); err != nil {
		return err
	}
	var hosts []string
	seen := map[string]bool{}
	for _, res := range r.Results {
		for _, n := range res.Nodes {
			if !seen[n.Host] {
				seen[n.Host] = true
				hosts = append(hosts, n.Host)
			}
		}
	}
	sort.Slice(hosts, func(i, j int) bool { return hostLess(hosts[i], hosts[j]) })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	hdr := []string{"policy", "ops/s", "mean", "p50", "p90", "p99", "p99.9", "max", r.slowHeader(), "errors"}
	for _, h := range hosts {
		hdr = append(hdr, shortHost(h))
	}
	hdr = append(hdr, "busiest", "req/100ms p99/med")
	fmt.Fprintln(tw, strings.Join(hdr, "\t")+"\t")
	for _, res := range r.Results {
		l := res.Latency
		name := res.Policy
		if res.Interrupted || res.Truncated {
			name += "*"
		}
		row := []string{name, fmt.Sprintf("%.0f", res.Throughput), msf(l.MeanUs), ms(l.P50Us), ms(l.P90Us),
			ms(l.P99Us), ms(l.P999Us), ms(l.MaxUs), slowShare(res), fmt.Sprint(res.Errors)}
		share := map[string]float64{}
		for _, n := range res.Nodes {
			share[n.Host] = n.Share
		}
		for _, h := range hosts {
			row = append(row, fmt.Sprintf("%.1f%%", 100*share[h]))
		}
		if res.Busiest != "" {
			row = append(row, shortHost(res.Busiest), fmt.Sprintf("%.0f/%.0f", res.BusiestP99, res.BusiestMedian))
		} else {
			row = append(row, "-", "-")
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if legend := nodeLegend(hosts); legend != "" {
		if _, err := fmt.Fprintln(w, legend); err != nil {
			return err
		}
	}
	for _, res := range r.Results {
		if line := res.partial(); line != "" {
			if _, err := fmt.Fprintf(w, "* %s: %s\n", res.Policy, line); err != nil {
				return err
			}
		}
	}
	if err := r.writeHedging(w); err != nil {
		return err
	}
	if err := r.writeZones(w); err != nil {
		return err
	}
	if err := r.writeFaults(w); err != nil {
		return err
	}
	for _, res := range r.Results {
		if res.Note != "" {
			if _, err := fmt.Fprintf(w, "%s: %s\n", res.Policy, res.Note); err != nil {
				return err
			}
		}
	}
	return nil
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// nodeLegend names the IP of each node column shortHost abbreviated
// ("nodes: n1 = 127.0.0.1, ..."); "" when none was.
func nodeLegend(hosts []string) string {
	var parts []string
	for _, h := range hosts {
		if s := shortHost(h); s != h {
			parts = append(parts, s+" = "+h)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "nodes: " + strings.Join(parts, ", ")
}

// shortHost abbreviates 127.0.0.3 to .3 for table headers when unambiguous.
func shortHost(h string) string {
	if i := strings.LastIndexByte(h, '.'); strings.HasPrefix(h, "127.") && i >= 0 {
		return "n" + h[i+1:]
	}
	return h
}

func hostLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	if len(pa) == 4 && len(pb) == 4 {
		for i := 0; i < 4; i++ {
			var x, y int
			fmt.Sscan(pa[i], &x)
			fmt.Sscan(pb[i], &y)
			if x != y {
				return x < y
			}
		}
	}
	return a < b
}

// partial says why a run is a partial measurement ("" when it is not).
func (res *PolicyResult) partial() string {
	how := ""
	switch {
	case res.Interrupted:
		how = "interrupted"
	case res.Truncated:
		how = "truncated by the time limit"
	default:
		return ""
	}
	if res.OperationsAsked > 0 {
		return fmt.Sprintf("%s after %d of %d operations: partial measurement", how, res.Operations, res.OperationsAsked)
	}
	return fmt.Sprintf("%s after %d operations: partial measurement", how, res.Operations)
}
