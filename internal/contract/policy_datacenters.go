// Policy scenarios of data centers: local DC first in the plan, and a local
// DC that no host is in.

package contract

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/simtest"
	"github.com/tailroute/tailroute/sim"
)

// LocalDCFirst: with a local DC, the plan starts with local replicas;
// remote hosts appear only WithRemoteDCs, after the local replicas (remote
// replicas first), and never without it.
func LocalDCFirst(t *testing.T, d Driver) {
	c := simtest.Start(t, sim.Config{Nodes: 6, DCs: 2, Seed: 4, Model: sim.ServiceModel{ZeroService: true}})
	dcOf := dcs(c)
	for _, remote := range []bool{false, true} {
		p := d.policy(t, tailroute.WithLocalDC("dc1"), tailroute.WithRemoteDCs(remote))
		s := d.session(t, c, p, Config{})
		d.createKeyspace(t, s, p, "dcks", "{'class':'NetworkTopologyStrategy','dc1':2,'dc2':2}")
		for i := 0; i < 200; i++ {
			key := []byte(fmt.Sprintf("user%d", i))
			isRep := map[string]bool{}
			for _, r := range c.ReplicasFor("dcks", key) {
				isRep[r] = true
			}
			ips := d.Plan(p, "dcks", key, true)
			require.Len(t, simtest.Set(ips), len(ips), "no host twice")
			// expected sections: local replicas, [remote replicas], local others, [remote others]
			var kinds []string
			for _, ip := range ips {
				k := "local-"
				if dcOf[ip] != "dc1" {
					k = "remote-"
				}
				if isRep[ip] {
					k += "replica"
				} else {
					k += "other"
				}
				kinds = append(kinds, k)
			}
			want := []string{"local-replica"}
			if remote {
				want = append(want, "remote-replica")
			}
			want = append(want, "local-other")
			if remote {
				want = append(want, "remote-other")
			}
			assert.Equal(t, want, compact(kinds), "key %s plan %v", key, ips)
			assert.Equal(t, []string{"local-replica", "local-replica"}, kinds[:2])
			assert.Len(t, ips, map[bool]int{false: 3, true: 6}[remote])
		}
		s.Close()
	}
}

// dcs returns each node's data center, by IP.
func dcs(c *sim.Cluster) map[string]string {
	out := map[string]string{}
	for _, nd := range c.Nodes() {
		out[nd.IP()] = nd.DC()
	}
	return out
}

// compact collapses runs of equal strings.
func compact(xs []string) []string {
	var out []string
	for _, x := range xs {
		if len(out) == 0 || out[len(out)-1] != x {
			out = append(out, x)
		}
	}
	return out
}

// UnknownLocalDC: a local DC that no host is in is reported (log and Err)
// once the session lists its hosts, and queries keep working: a name
// differing only in case falls back to that DC, an unknown one to every
// host.
func UnknownLocalDC(t *testing.T, d Driver) {
	c := simtest.Start(t, sim.Config{Nodes: 4, DCs: 2, Seed: 5, Model: sim.ServiceModel{ZeroService: true}})
	dcOf := dcs(c)
	for _, tc := range []struct {
		name    string
		want    string // in the error
		planDCs []string
	}{
		{"DC1", `using "dc1", which differs only in case`, []string{"dc1"}},
		{"no-such-dc", "every host is treated as local", []string{"dc1", "dc2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := d.New(tailroute.WithLocalDC(tc.name))
			require.NoError(t, err, "not knowable at New")
			log := &Log{}
			s := d.session(t, c, p, Config{Log: log})
			defer s.Close()
			d.createKeyspace(t, s, p, "unknowndc", "{'class':'NetworkTopologyStrategy','dc1':2,'dc2':2}")
			for i := 0; i < 20; i++ {
				key := fmt.Sprintf("user%d", i)
				require.NoError(t, s.Exec("INSERT INTO unknowndc.usertable (y_id, field0) VALUES (?, ?)", nil, key, "v"))
				v, err := s.Read("SELECT field0 FROM unknowndc.usertable WHERE y_id = ?", key)
				require.NoError(t, err)
				assert.Equal(t, "v", v)
			}
			err = p.Err()
			require.Error(t, err)
			assert.Contains(t, err.Error(), fmt.Sprintf("WithLocalDC(%q)", tc.name))
			assert.Contains(t, err.Error(), `the hosts' data centers: "dc1", "dc2"`)
			assert.Contains(t, err.Error(), tc.want)
			assert.Len(t, log.Find(tc.want), 1, "logged once")

			var planDCs []string
			for _, ip := range d.Plan(p, "unknowndc", []byte("user1"), true) {
				planDCs = append(planDCs, dcOf[ip])
			}
			assert.ElementsMatch(t, tc.planDCs, simtest.Set(planDCs))
		})
	}
}
