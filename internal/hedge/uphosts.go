package hedge

import (
	"sync"
	"sync/atomic"
)

// UpHosts counts the distinct hosts that are up, keyed by address, as a
// wrapping policy learns them from the driver's AddHost, HostUp, HostDown
// and RemoveHost calls: an execution is armed only while at least two are
// up (Hedger.Admit). N is read on every Pick without a lock.
type UpHosts struct {
	mu sync.Mutex
	up map[string]struct{}
	n  atomic.Int32
}

// Set records whether the host at key is up.
func (u *UpHosts) Set(key string, up bool) {
	u.mu.Lock()
	if u.up == nil {
		u.up = map[string]struct{}{}
	}
	if up {
		u.up[key] = struct{}{}
	} else {
		delete(u.up, key)
	}
	u.n.Store(int32(len(u.up)))
	u.mu.Unlock()
}

// N returns how many hosts are up.
func (u *UpHosts) N() int32 { return u.n.Load() }
