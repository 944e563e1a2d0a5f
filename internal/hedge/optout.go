package hedge

import "context"

type disableKey struct{}

// Disable returns a context that opts a query execution out of hedging
// (the adapters' Disable): a wrapping policy leaves such an execution to
// the wrapped policy, with no speculative attempt.
func Disable(ctx context.Context) context.Context {
	return context.WithValue(ctx, disableKey{}, true)
}

// Disabled reports whether ctx carries Disable; false for nil.
func Disabled(ctx context.Context) bool { return ctx != nil && ctx.Value(disableKey{}) != nil }
