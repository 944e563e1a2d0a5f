package route

import (
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tailroute/tailroute/internal/core"
	"github.com/tailroute/tailroute/internal/track"
)

// The host table: hosts added, removed, up and down, the partitioner and
// the keyspaces' replication, rebuilt into an immutable hostTable that Pick
// reads with one atomic load.

func hostID[H HostInfo](h H) string {
	if id := h.HostID(); id != "" {
		return id
	}
	return h.ConnectAddressAndPort()
}

// AddHosts adds or updates hosts with one rebuild.
func (r *Router[H, S]) AddHosts(hosts []H) {
	if len(hosts) == 0 {
		return
	}
	var zero H
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, info := range hosts {
		if info == zero || r.foreign(info) {
			continue
		}
		id := hostID(info)
		e := &hostEntry[H]{info: info, id: id, dc: info.DataCenter(), rack: info.Rack(), h: r.tr.Host(id)}
		e.local = r.cfg.LocalDC == "" || e.dc == r.cfg.LocalDC
		replaced := false
		for i, old := range r.entries {
			if old.id == id {
				e.up = old.up
				r.entries[i] = e
				replaced = true
				break
			}
		}
		if !replaced {
			e.up = new(atomic.Bool)
			e.up.Store(true)
			r.entries = append(r.entries, e)
		}
	}
	r.rebuildLocked()
}

// RemoveHost forgets a host.
func (r *Router[H, S]) RemoveHost(host H) {
	var zero H
	if host == zero || r.foreign(host) {
		return
	}
	id := hostID(host)
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, e := range r.entries {
		if e.id == id {
			r.entries = append(r.entries[:i:i], r.entries[i+1:]...)
			r.tr.Remove(id)
			r.rebuildLocked()
			return
		}
	}
}

// HostUp marks a host up. A host that was down restarts as a clean slate
// (track.Host.Reset).
func (r *Router[H, S]) HostUp(host H) {
	var zero H
	if host == zero || r.foreign(host) {
		return
	}
	e := r.entry(hostID(host))
	if e == nil {
		r.AddHosts([]H{host})
		return
	}
	if !e.up.Swap(true) {
		e.h.Reset()
	}
}

// HostDown marks a host down: it is not handed out until HostUp. Its
// in-flight count is reset.
func (r *Router[H, S]) HostDown(host H) {
	var zero H
	if host == zero || r.foreign(host) {
		return
	}
	if e := r.entry(hostID(host)); e != nil {
		if e.up.Swap(false) {
			e.h.Reset()
		}
	}
}

func (r *Router[H, S]) entry(id string) *hostEntry[H] {
	t := r.tbl.Load()
	if i, ok := t.byID[id]; ok {
		return t.hosts[i]
	}
	return nil
}

// Host returns the tracker state of a known host (nil if unknown).
func (r *Router[H, S]) Host(host H) *track.Host {
	if e := r.entry(hostID(host)); e != nil {
		return e.h
	}
	return nil
}

// Observe records an attempt's latency and outcome on its host (the
// driver's query observer).
func (r *Router[H, S]) Observe(host H, latency time.Duration, o track.Outcome) {
	var zero H
	if host == zero || r.foreign(host) {
		return
	}
	if e := r.entry(hostID(host)); e != nil {
		e.h.Observe(r.clock.Now(), latency, o)
	}
}

// SetPartitioner sets the cluster's partitioner. Token awareness needs
// Murmur3Partitioner.
func (r *Router[H, S]) SetPartitioner(partitioner string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.partitioner != partitioner {
		r.partitioner = partitioner
		r.rebuildLocked()
	}
}

// KeyspaceChanged fetches a keyspace's replication again, or forgets it
// when change is "DROPPED".
func (r *Router[H, S]) KeyspaceChanged(keyspace, change string) {
	if keyspace == "" {
		return
	}
	if strings.EqualFold(change, "DROPPED") {
		r.mu.Lock()
		delete(r.reps, keyspace)
		r.rebuildLocked()
		r.mu.Unlock()
		return
	}
	r.loadKeyspace(keyspace, true)
}

var errNoSession = errors.New("policy: no session")

// loadKeyspace fetches the keyspace's replication and installs its replica
// map. It never holds r.mu while talking to the cluster.
func (r *Router[H, S]) loadKeyspace(ks string, force bool) *ksEntry {
	r.ksMu.Lock()
	defer r.ksMu.Unlock()
	if !force {
		if e, ok := r.tbl.Load().ks[ks]; ok && (e.rm != nil || e.retryAt == 0 || r.clock.Now() < e.retryAt) {
			return e
		}
	}
	var (
		class string
		opts  map[string]any
	)
	err := errNoSession
	if fp := r.getKS.Load(); fp != nil {
		class, opts, err = (*fp)(ks)
	}
	var rep core.Replication
	ok := false
	if err == nil {
		rep, ok, _ = core.ParseReplication(class, opts)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if ok {
		r.reps[ks] = rep
	} else {
		delete(r.reps, ks)
	}
	old := r.tbl.Load()
	t := *old
	t.ks = make(map[string]*ksEntry, len(old.ks)+1)
	for k, v := range old.ks {
		t.ks[k] = v
	}
	e := &ksEntry{}
	switch {
	case ok && t.ring != nil:
		e.rm = t.ring.Replicas(rep)
	case err != nil:
		e.retryAt = r.clock.Now() + time.Second // transient? try again in a second
	}
	t.ks[ks] = e
	r.tbl.Store(&t)
	return e
}

// Refuse tells the router that a second session shares the policy: from
// now on a host event (add, remove, up, down) about a known host given as
// another host value than the one held is that session's and is ignored,
// so the served session's hosts stay as it reports them.
func (r *Router[H, S]) Refuse() { r.refused.Store(true) }

// foreign reports whether host is another session's value of a known host
// (only after Refuse).
func (r *Router[H, S]) foreign(host H) bool {
	if !r.refused.Load() {
		return false
	}
	e := r.entry(hostID(host))
	return e != nil && e.info != host
}

// ForgetHosts drops every host and keyspace placement (a new session after
// the previous one closed).
func (r *Router[H, S]) ForgetHosts() {
	r.ksMu.Lock()
	defer r.ksMu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.entries {
		r.tr.Remove(e.id)
	}
	r.entries = nil
	clear(r.reps)
	r.rebuildLocked()
}

// rebuildLocked builds a new table from r.entries (r.mu held).
func (r *Router[H, S]) rebuildLocked() {
	r.resolveLocalDCLocked()
	t := &hostTable[H]{
		hosts: append([]*hostEntry[H](nil), r.entries...),
		byID:  make(map[string]int32, len(r.entries)),
		ks:    make(map[string]*ksEntry, len(r.reps)),
	}
	for i, e := range t.hosts {
		t.byID[e.id] = int32(i)
		if e.local {
			t.local = append(t.local, int32(i))
		} else {
			t.remote = append(t.remote, int32(i))
		}
	}
	if strings.HasSuffix(r.partitioner, "Murmur3Partitioner") {
		nodes := make([]core.Node, len(t.hosts))
		ok, ntok := true, 0
		for i, e := range t.hosts {
			nodes[i] = core.Node{ID: e.id, DC: e.dc, Rack: e.rack}
			for _, s := range e.info.Tokens() {
				v, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					ok = false
					break
				}
				nodes[i].Tokens = append(nodes[i].Tokens, v)
				ntok++
			}
		}
		if ok && ntok > 0 {
			t.ring = core.NewRing(nodes)
		}
	}
	if t.ring != nil {
		for ks, rep := range r.reps {
			t.ks[ks] = &ksEntry{rm: t.ring.Replicas(rep)}
		}
	}
	r.noteRackLocked(r.tbl.Load(), t)
	r.tbl.Store(t)
}
