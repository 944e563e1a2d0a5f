// Replication: reads, scans and writes of a partition on its replicas
// (in-process stores or remote peers over the admin endpoint), at CL ONE.

package sim

import (
	"sort"
)

// readRow reads a partition on its replica: this node's store when it is a
// replica, otherwise the first replica's store (in-process) or the replica
// over the admin endpoint (process mode).
func (n *Node) readRow(ks string, td *tableDef, key []byte) ([][]byte, error) {
	c := n.c
	reps := c.schema.replicasOf(ks, Murmur3Token(key))
	if len(reps) == 0 {
		return nil, &unavailableErr{"Cannot achieve consistency level ONE: keyspace " + ks + " has no replica for this key"}
	}
	for _, r := range reps {
		if r == n.m.idx {
			return n.store.get(ks, td.name, key), nil
		}
	}
	var lastErr error
	for _, r := range reps {
		mb := c.members[r]
		if mb.node != nil {
			return mb.node.store.get(ks, td.name, key), nil
		}
		vals, err := c.remoteGet(mb, ks, td.name, key)
		if err == nil {
			return vals, nil
		}
		lastErr = err
	}
	return nil, &unavailableErr{"Cannot achieve consistency level ONE: " + lastErr.Error()}
}

// scanRows merges a token-ordered scan over every member's store.
func (n *Node) scanRows(ks string, td *tableDef, from int64, fromEx bool, limit int) ([]*storedRow, error) {
	c := n.c
	seen := map[string]bool{}
	var all []*storedRow
	pk := td.pk
	for _, mb := range c.members {
		var rs []*storedRow
		if mb.node != nil {
			rs = mb.node.store.scan(ks, td.name, from, fromEx, limit)
		} else {
			var err error
			rs, err = c.remoteScan(mb, ks, td.name, from, fromEx, limit)
			if err != nil {
				continue // an unreachable peer's ranges are missed (CL ONE, best effort)
			}
		}
		for _, r := range rs {
			k := string(r.vals[pk])
			if !seen[k] {
				seen[k] = true
				all = append(all, r)
			}
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].token != all[j].token {
			return all[i].token < all[j].token
		}
		return string(all[i].vals[pk]) < string(all[j].vals[pk])
	})
	if len(all) > limit {
		all = all[:limit]
	}
	return all, nil
}

// write applies a mutation on every replica of its key.
func (n *Node) write(m *mutation, ncols int) error {
	c := n.c
	// the partition key value is stored as a column too
	td := c.schema.table(m.Keyspace, m.Table)
	if td != nil && !m.DeleteRow {
		m.Sets = append(m.Sets, colValue{Col: td.pk, Val: m.Key})
	}
	reps := c.schema.replicasOf(m.Keyspace, Murmur3Token(m.Key))
	if len(reps) == 0 {
		return &unavailableErr{"Cannot achieve consistency level ONE: keyspace " + m.Keyspace + " has no replica for this key"}
	}
	ok := 0
	var lastErr error
	for _, r := range reps {
		if err := c.applyOn(c.members[r], m, ncols); err != nil {
			lastErr = err
			continue
		}
		ok++
	}
	if ok == 0 {
		return &unavailableErr{"Cannot achieve consistency level ONE: " + lastErr.Error()}
	}
	return nil
}

func (c *Cluster) applyOn(mb *member, m *mutation, ncols int) error {
	if mb.node != nil {
		mb.node.store.apply(m, ncols)
		return nil
	}
	return c.remoteApply(mb, m)
}
