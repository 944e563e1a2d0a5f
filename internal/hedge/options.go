package hedge

import (
	"fmt"

	"github.com/tailroute/tailroute/internal/settings"
)

// config is a Hedger's configuration, written by the hedging options of
// package tailroute.
type config = settings.Hedge

// errorf returns an error with the package's prefix.
func errorf(format string, a ...any) error {
	return fmt.Errorf("speculative: "+format, a...)
}
