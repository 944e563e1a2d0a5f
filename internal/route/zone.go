package route

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tailroute/tailroute/internal/core"
	"github.com/tailroute/tailroute/internal/track"
)

// The zone rule (package tailroute, "Zones"): with WithLocalRack the
// replica in the client's zone goes first while its expected response is
// within WithZoneBound of the best replica's; attempts sent out of the
// zone are counted on their host (track.Host.CountOutOfZone).

// inZone reports whether host entry e is in the client's zone: the local
// data center and the rack WithLocalRack names.
func (r *Router[H, S]) inZone(e *hostEntry[H]) bool {
	return r.cfg.LocalRack != "" && e.local && e.rack == r.cfg.LocalRack
}

// keepInZone moves the first in-zone replica among the eligible ordered
// candidates ahead of the first, unless the first is in the zone already
// or the engine's own evidence says the in-zone one is worse than the
// bound allows (package tailroute, "Zones"): it is kept while it is not
// stalled (WithStall) and
//
//	E'_zone <= ZoneBound x min_s E_s, or
//	E'_zone <= ZoneBound x max_s E_s and the medians say it is no slower (mediansKeep)
//
// E_s is expectedResponse (expectOf), min_s over E'_zone and the
// other eligible replicas, max_s over the others. E'_zone is the in-zone replica's, read with
// what the engine knows beyond its estimates: R_s at
// least its Silence (a request it has owed for that long has taken at
// least that: a pause is left well before the stall threshold), and R_s
// and 1/mu_s raised to the service time the known-slow rule credits it
// with (slowService) when that is at least slowServiceRatio x the fastest
// other eligible replica's. Demoted (unhealthy) candidates are not
// eligible, so they are never kept. None is kept while the pause memory
// is on (zonePaused).
func (st *queryState[H, S]) keepInZone(c []core.Candidate, eligible int, known []knownService, now time.Duration) {
	p := st.r
	if eligible < 2 {
		return
	}
	hosts := st.tbl.hosts
	if p.inZone(hosts[c[0].Host]) {
		return
	}
	z := -1
	for k := 1; k < eligible; k++ {
		if p.inZone(hosts[c[k].Host]) {
			z = k
			break
		}
	}
	if z < 0 {
		return
	}
	h := hosts[c[z].Host].h
	kz := lookupKnown(known, c[z].Host)
	v := kz.view
	if p.zonePaused(&v, now) || p.stalled(&v) {
		return
	}
	raised := false // E'_zone differs from E_zone
	if fastest := fastestOther(c, eligible, z, known); fastest > 0 {
		if svc := slowService(kz, h, fastest, now); svc >= slowServiceRatio*fastest && svc > v.ServiceTime {
			v.ResponseTime, v.ServiceTime, raised = max(v.ResponseTime, svc), svc, true
		}
	}
	if s := float64(v.Silence); s > v.ResponseTime {
		v.ResponseTime, raised = s, true
	}
	local := p.expectOf(kz)
	if raised {
		local = max(local, p.expectedResponse(&v, now))
	}
	best, worst := local, 0.0
	for k := 0; k < eligible; k++ {
		if k != z {
			e := p.expectOf(lookupKnown(known, c[k].Host))
			best, worst = min(best, e), max(worst, e)
		}
	}
	b := p.cfg.ZoneBound
	if local <= b*best || local <= b*worst && st.mediansKeep(c, eligible, z, now) {
		core.PromoteHost(c, c[z].Host)
	}
}

// mediansKeep is the zone rule's second reading (package tailroute,
// "Zones"), for an in-zone replica (position z) that the estimates put
// beyond the bound of the best eligible replica but not of every one: it
// reports whether the client's own latencies say the in-zone replica is
// no slower: its median over the latency window at most the least median
// of the other eligible replicas, each median from slowMedianMin answers
// at least (without them, false: the estimates decide).
func (st *queryState[H, S]) mediansKeep(c []core.Candidate, eligible, z int, now time.Duration) bool {
	hosts := st.tbl.hosts
	mz, n := hosts[c[z].Host].h.LatencyMedian(now)
	if n < slowMedianMin {
		return false
	}
	least := time.Duration(-1)
	for k := 0; k < eligible; k++ {
		if k == z {
			continue
		}
		if m, n := hosts[c[k].Host].h.LatencyMedian(now); n >= slowMedianMin && (least < 0 || m < least) {
			least = m
		}
	}
	return least >= 0 && mz <= least
}

// The pause memory (package tailroute, "Zones"): a silence of
// zonePauseStalls stall thresholds (WithStall) is a pause, and no in-zone
// replica is kept for zonePauseMemory after the last such reading. In
// cmd/vsim's healthy zone cell 2 fires on the replicas' own latency tails
// (0.7 points more requests out of zone) and 2.5 and 3 never do; any
// memory longer than the pause cell's period (2 s) measures the same
// there (docs/experiments/zone-aware.md).
const (
	zonePauseStalls = 3.0
	zonePauseMemory = 10 * time.Second
)

// zonePaused reports whether the zone rule's pause memory is on at now,
// after recording a pause if v, the in-zone replica's view, shows one.
func (r *Router[H, S]) zonePaused(v *track.View, now time.Duration) bool {
	if v.Silence > 0 && float64(v.Silence) >= zonePauseStalls*r.stallThreshold(v) {
		at := int64(now + zonePauseMemory)
		for old := r.zonePausedUntil.Load(); old < at && !r.zonePausedUntil.CompareAndSwap(old, at); old = r.zonePausedUntil.Load() {
		}
		return true
	}
	return now < time.Duration(r.zonePausedUntil.Load())
}

// countZone counts an attempt handed out to e when e is out of the
// client's zone (only with WithLocalRack).
func (r *Router[H, S]) countZone(e *hostEntry[H]) {
	if r.cfg.LocalRack != "" && !r.inZone(e) {
		e.h.CountOutOfZone()
	}
}

// RackProblem returns why no host is in the client's zone (nil when one
// is, without WithLocalRack, or before the session lists its hosts).
func (r *Router[H, S]) RackProblem() error { return r.rackProblem(r.tbl.Load()) }

func (r *Router[H, S]) rackProblem(t *hostTable[H]) error {
	want := r.cfg.LocalRack
	if want == "" || len(t.hosts) == 0 {
		return nil
	}
	var racks []string
	for _, e := range t.hosts {
		if !e.local {
			continue
		}
		if e.rack == want {
			return nil
		}
		if !slices.Contains(racks, e.rack) {
			racks = append(racks, e.rack)
		}
	}
	slices.Sort(racks)
	quoted := make([]string, len(racks))
	hint := ""
	for i, rk := range racks {
		quoted[i] = fmt.Sprintf("%q", rk)
		if strings.EqualFold(rk, want) {
			hint = fmt.Sprintf(" (%q differs only in case)", rk)
		}
	}
	return fmt.Errorf("policy: WithLocalRack(%q): no host of the local data center is in rack %q (its racks: %s)%s; "+
		"no replica is preferred and every attempt counts as out of zone until a host of %q appears: fix the name",
		want, want, strings.Join(quoted, ", "), hint, want)
}

// noteRackLocked logs when the table that replaces old changes whether
// the client's rack is known (r.mu held).
func (r *Router[H, S]) noteRackLocked(old, t *hostTable[H]) {
	was, is := r.rackProblem(old), r.rackProblem(t)
	switch {
	case is != nil && (was == nil || was.Error() != is.Error()):
		r.hooks.Logf("%v", is)
	case is == nil && was != nil:
		r.hooks.Logf("WithLocalRack(%q): hosts of rack %q found", r.cfg.LocalRack, r.cfg.LocalRack)
	}
}
