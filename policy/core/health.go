package core

// DemoteUnhealthy applies the health rule of the success-prioritized
// fallback cascade before any speed ranking: a candidate whose success rate
// (Candidate.Success, 0..1) is within tolerance of the best candidate's
// (Success >= best*(1-tolerance)) stays eligible; a materially less healthy
// one stays eligible only with probability (Success/best)^3 (the cascade's
// weight, success rate cubed) and is otherwise marked Demoted, which the
// orderings place behind every candidate that is not. The healthiest
// candidate is never demoted, so when every replica fails alike none is
// (the cascade: "when all nodes are suffering, distribute proportionally").
// Recovery: a host that stops failing regains eligibility as its rolling
// success rate rises, and a demoted host that gets no traffic at all still
// receives probes (PromoteStale). It reports how many were demoted.
func DemoteUnhealthy(c []Candidate, r *Rand, tolerance float64) int {
	best := 0.0
	for i := range c {
		if c[i].Success > best {
			best = c[i].Success
		}
	}
	if best <= 0 {
		return 0
	}
	cut := best * (1 - tolerance)
	n := 0
	for i := range c {
		s := c[i].Success
		if s >= cut {
			continue
		}
		w := s / best
		if r.Float() < w*w*w {
			continue
		}
		c[i].Demoted = true
		n++
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
