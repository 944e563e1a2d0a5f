package main

import (
	"strings"
	"testing"
)

// The zone scenarios shape the embedded cluster (6 nodes, 3 racks, one
// replica per rack) and report the traffic between zones for every
// policy, with both drivers; tailroute-rack keeps most requests in the
// clients' zone where token-aware round robin sends about two thirds out.
func TestZonesScenarioReportsOutOfZoneShare(t *testing.T) {
	for _, drv := range []string{"v1", "v2"} {
		t.Run(drv, func(t *testing.T) {
			rep, _ := runJSON(t, "-driver", drv, "-scenario", "zones", "-compare", "tailroute-rack,token-aware", "-records", "200",
				"-ops", "1500", "-target", "500", "-threads", "8", "-service-time", "2ms")
			if len(rep.Results) != 2 {
				t.Fatalf("results %+v", rep.Results)
			}
			if n := len(rep.Results[0].Nodes); n != 6 {
				t.Errorf("%d nodes, want the zone scenarios' 6", n)
			}
			rack, rr := rep.Results[0].Zones, rep.Results[1].Zones
			if rack == nil || rr == nil {
				t.Fatalf("zone stats missing: %+v, %+v", rack, rr)
			}
			if rack.Requests < 1500 || rr.Requests < 1500 {
				t.Errorf("requests counted %d, %d, want >= the 1500 operations", rack.Requests, rr.Requests)
			}
			if rack.OutOfZonePct > 20 {
				t.Errorf("tailroute-rack: %.1f %% out of zone, want the clients' zone kept", rack.OutOfZonePct)
			}
			if rr.OutOfZonePct < 50 || rr.OutOfZonePct > 80 {
				t.Errorf("token-aware: %.1f %% out of zone, want about two thirds", rr.OutOfZonePct)
			}
		})
	}
}

// -client-rack must name a rack of the embedded cluster; -racks is for the
// embedded cluster only.
func TestZoneFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-scenario", "zones", "-client-rack", "rack4"}, "-client-rack rack4: allowed a rack of the embedded cluster, rack1..rack3 (-racks 3), or spread"},
		{[]string{"-racks", "0"}, "-racks 0: allowed 1..64"},
		{[]string{"-racks", "2", "-zone-latency", "1ms,2ms"}, "-zone-latency 1ms,2ms: allowed three durations"},
		{[]string{"-hosts", "10.0.0.1", "-racks", "3"}, "-racks shapes the embedded simulated cluster"},
	} {
		_, err := parseFlags(tc.args, &strings.Builder{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}
