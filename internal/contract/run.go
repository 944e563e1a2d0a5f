package contract

import "testing"

// scenario is one named scenario for a binding of type D.
type scenario[D any] struct {
	name string
	run  func(*testing.T, D)
}

// run runs each scenario against d as a subtest.
func run[D any](t *testing.T, d D, scenarios []scenario[D]) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) { sc.run(t, d) })
	}
}
