// Server-load polls' queries: the context that marks a poll and the plan
// of just the polled host that such a query gets.

package route

import "context"

// pollKey marks the context of a poll query; its value is a pollMark.
type pollKey struct{}

type pollMark struct{ id string }

// withPoll returns ctx marked as the context of a poll of the host with
// the router's id id (the poller's queries).
func withPoll(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, pollKey{}, pollMark{id: id})
}

// IsServerLoadPoll reports whether ctx is the context of a server-load poll.
func IsServerLoadPoll(ctx context.Context) bool {
	if ctx == nil {
		return false
	}
	_, ok := ctx.Value(pollKey{}).(pollMark)
	return ok
}

// Polling reports whether a poll query is in flight (one atomic load).
func (r *Router[H, S]) Polling() bool { return r.polls.Load() > 0 }

// IsPoll reports whether ctx belongs to a poll of this router (cheap when
// none runs: one atomic load).
func (r *Router[H, S]) IsPoll(ctx context.Context) bool {
	return r.polls.Load() > 0 && IsServerLoadPoll(ctx)
}

// PollPlan returns the plan of a poll query (just the polled host, neither
// measured nor counted in os_s), or nil when ctx is not a poll's. Adapters
// whose driver cannot pin a query to a host call it first in Pick.
func (r *Router[H, S]) PollPlan(ctx context.Context) func() S {
	if r.polls.Load() == 0 || ctx == nil {
		return nil
	}
	m, ok := ctx.Value(pollKey{}).(pollMark)
	if !ok {
		return nil
	}
	var none S
	e := r.entry(m.id)
	done := false
	return func() S {
		if done || e == nil || !e.isUp() {
			return none
		}
		done = true
		return any(&pollHost[H, S]{info: e.info}).(S)
	}
}

// pollHost is the host of a poll query's plan: no measurement, no os_s.
type pollHost[H HostInfo, S any] struct{ info H }

// Info returns the polled host.
func (h *pollHost[H, S]) Info() H { return h.info }

// Mark does nothing: polls are not user traffic.
func (h *pollHost[H, S]) Mark(error) {}
