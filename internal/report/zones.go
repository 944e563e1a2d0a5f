package report

import (
	"fmt"
	"io"
)

// ZoneStats is the run phase's traffic between the clients' zones and the
// nodes' (the embedded cluster with racks, sim.Cluster.Traffic), whatever
// the policy: data requests and bytes, and the share of each that left the
// client's zone (rack).
type ZoneStats struct {
	Requests       uint64  `json:"requests"`
	OutOfZone      uint64  `json:"out_of_zone"`
	OutOfZonePct   float64 `json:"out_of_zone_pct"`
	Bytes          uint64  `json:"bytes"`
	CrossZoneBytes uint64  `json:"cross_zone_bytes"`
	CrossZonePct   float64 `json:"cross_zone_bytes_pct"`
}

// Finish sets the percentages from the counts.
func (z *ZoneStats) Finish() {
	if z.Requests > 0 {
		z.OutOfZonePct = 100 * float64(z.OutOfZone) / float64(z.Requests)
	}
	if z.Bytes > 0 {
		z.CrossZonePct = 100 * float64(z.CrossZoneBytes) / float64(z.Bytes)
	}
}

// writeZones prints one line per policy with zone statistics.
func (r *Report) writeZones(w io.Writer) error {
	for _, res := range r.Results {
		z := res.Zones
		if z == nil {
			continue
		}
		if _, err := fmt.Fprintf(w, "%s zones: %.2f%% of requests out of the client's zone (%d of %d), %.2f%% of bytes\n",
			res.Policy, z.OutOfZonePct, z.OutOfZone, z.Requests, z.CrossZonePct); err != nil {
			return err
		}
	}
	return nil
}
