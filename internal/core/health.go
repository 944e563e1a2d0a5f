package core

// DemoteUnhealthy applies the health rule of the success-prioritized
// fallback cascade before any speed ranking. A candidate whose success rate
// (Candidate.Success, 0..1) is within tolerance of the best candidate's
// (Success >= best*(1-tolerance)) is healthy. When some are not, one
// candidate is drawn with probability proportional to its weight
// (Success/best)^3 (the cascade's weighted pick, success rate cubed): every
// less healthy candidate except the drawn one is marked Demoted, which the
// orderings place behind every candidate that is not. So a replica failing
// half of its requests next to two healthy ones stays a first choice in
// about 0.125/2.125 = 6 % of picks, one that always fails only through
// probes, and when every replica fails alike none is demoted (the cascade:
// "when all nodes are suffering, distribute proportionally"). Recovery: a
// host that stops failing regains its place as its rolling success rate
// rises, and a demoted host that gets no traffic at all still receives
// probes (the caller picks them; PromoteHost). It reports how many were demoted.
func DemoteUnhealthy(c []Candidate, r *Rand, tolerance float64) int {
	best := 0.0
	for i := range c {
		if s := float64(c[i].Success); s > best {
			best = s
		}
	}
	if best <= 0 {
		return 0
	}
	cut := best * (1 - tolerance)
	var sum float64
	unhealthy := 0
	for i := range c {
		w := float64(c[i].Success) / best
		sum += w * w * w
		if float64(c[i].Success) < cut {
			unhealthy++
		}
	}
	if unhealthy == 0 {
		return 0
	}
	u := r.Float() * sum
	drawn := len(c) - 1
	for i := range c {
		w := float64(c[i].Success) / best
		if u -= w * w * w; u < 0 {
			drawn = i
			break
		}
	}
	n := 0
	for i := range c {
		if i != drawn && float64(c[i].Success) < cut {
			c[i].Demoted = true
			n++
		}
	}
	return n
}

// demotedLast moves Demoted candidates behind the others (stable) and
// returns the number of candidates that are not demoted.
func demotedLast(c []Candidate) int {
	k := 0
	for i := range c {
		if !c[i].Demoted {
			if i != k {
				x := c[i]
				copy(c[k+1:i+1], c[k:i])
				c[k] = x
			}
			k++
		}
	}
	return k
}

// PromoteHost moves the candidate for host to the front (a probe chosen by
// the caller) and reports whether it was found.
func PromoteHost(c []Candidate, host int32) bool {
	for i := range c {
		if c[i].Host == host {
			promote(c, i)
			return true
		}
	}
	return false
}
