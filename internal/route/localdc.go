package route

import (
	"fmt"
	"slices"
	"strings"
)

// resolveLocalDCLocked sets the effective local DC from the configured one
// and the hosts' DCs (see WithLocalDC), marks each entry local or remote, and
// logs when the effective local DC changes (r.mu held).
func (r *Router[H, S]) resolveLocalDCLocked() {
	want := r.cfg.LocalDC
	eff, problem := want, error(nil)
	if want != "" && len(r.entries) > 0 {
		var dcs []string
		for _, e := range r.entries {
			if !slices.Contains(dcs, e.dc) {
				dcs = append(dcs, e.dc)
			}
		}
		slices.Sort(dcs)
		if !slices.Contains(dcs, want) {
			var folded []string
			for _, dc := range dcs {
				if strings.EqualFold(dc, want) {
					folded = append(folded, dc)
				}
			}
			quoted := make([]string, len(dcs))
			for i, dc := range dcs {
				quoted[i] = fmt.Sprintf("%q", dc)
			}
			if len(folded) == 1 {
				eff = folded[0]
				problem = fmt.Errorf("policy: WithLocalDC(%q): no host is in data center %q (the hosts' data centers: %s); "+
					"using %q, which differs only in case: fix the name", want, want, strings.Join(quoted, ", "), eff)
			} else {
				eff = ""
				problem = fmt.Errorf("policy: WithLocalDC(%q): no host is in data center %q (the hosts' data centers: %s); "+
					"every host is treated as local until a host of %q appears: fix the name", want, want, strings.Join(quoted, ", "), want)
			}
		}
	}
	changed := *r.localDC.Load() != eff
	if changed {
		r.localDC.Store(&eff)
	}
	switch {
	case problem != nil:
		r.dcProblem.Store(&problem) // with the latest list of data centers
		if changed {
			r.hooks.Logf("%v", problem)
		}
	case r.dcProblem.Swap(nil) != nil:
		r.hooks.Logf("WithLocalDC(%q): hosts of data center %q found", want, want)
	}
	for i, e := range r.entries {
		if local := eff == "" || e.dc == eff; e.local != local {
			c := *e
			c.local = local
			r.entries[i] = &c
		}
	}
}
