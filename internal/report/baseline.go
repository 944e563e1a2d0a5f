package report

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

// ReadReport reads a report.json written by WriteJSON; path may be the
// file or the directory holding report.json.
func ReadReport(path string) (*Report, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "report.json")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: not a ycsb-lite report: %w", path, err)
	}
	if len(r.Results) == 0 {
		return nil, fmt.Errorf("%s: the report has no results", path)
	}
	return &r, nil
}

// WriteBaseline prints, per policy of r also in base, p50, p99, p99.9 (ms)
// and throughput (ops/s): the baseline's, this run's, and the change in
// percent of the baseline (latte's show -b). Policies in only one of the
// two reports are named.
func (r *Report) WriteBaseline(w io.Writer, base *Report, name string) error {
	if _, err := fmt.Fprintf(w, "\nagainst baseline %s (%s)\n", name, base.Command); err != nil {
		return err
	}
	byPolicy := map[string]*PolicyResult{}
	for i := range base.Results {
		byPolicy[base.Results[i].Policy] = &base.Results[i]
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tmetric\tbaseline\tthis run\tchange\t")
	var missing []string
	for _, res := range r.Results {
		b := byPolicy[res.Policy]
		if b == nil {
			missing = append(missing, res.Policy)
			continue
		}
		delete(byPolicy, res.Policy)
		rows := []struct {
			metric    string
			was, now  float64
			precision int
		}{
			{"p50 ms", float64(b.Latency.P50Us) / 1000, float64(res.Latency.P50Us) / 1000, 2},
			{"p99 ms", float64(b.Latency.P99Us) / 1000, float64(res.Latency.P99Us) / 1000, 2},
			{"p99.9 ms", float64(b.Latency.P999Us) / 1000, float64(res.Latency.P999Us) / 1000, 2},
			{"ops/s", b.Throughput, res.Throughput, 0},
		}
		for i, row := range rows {
			policy := ""
			if i == 0 {
				policy = res.Policy
			}
			change := "-"
			if row.was != 0 {
				change = fmt.Sprintf("%+.1f%%", 100*(row.now-row.was)/row.was)
			}
			fmt.Fprintf(tw, "%s\t%s\t%.*f\t%.*f\t%s\t\n", policy, row.metric, row.precision, row.was, row.precision, row.now, change)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(missing) > 0 {
		if _, err := fmt.Fprintf(w, "not in the baseline: %s\n", strings.Join(missing, ", ")); err != nil {
			return err
		}
	}
	var only []string
	for _, b := range base.Results {
		if byPolicy[b.Policy] != nil {
			only = append(only, b.Policy)
		}
	}
	if len(only) > 0 {
		_, err := fmt.Fprintf(w, "only in the baseline: %s\n", strings.Join(only, ", "))
		return err
	}
	return nil
}
