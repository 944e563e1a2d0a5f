package main

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// version describes this binary from its build info: the module version,
// the VCS revision and time (a "+modified" tree), the Go version and the
// Cassandra drivers built in.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "ycsb-lite (no build info)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ycsb-lite %s", bi.Main.Version)
	var rev, at, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+modified"
			}
		}
	}
	if rev != "" {
		fmt.Fprintf(&b, " (%.12s%s, %s)", rev, modified, at)
	}
	fmt.Fprintf(&b, " %s", bi.GoVersion)
	for _, d := range bi.Deps {
		switch d.Path {
		case "github.com/gocql/gocql", "github.com/apache/cassandra-gocql-driver/v2":
			fmt.Fprintf(&b, " %s@%s", d.Path, d.Version)
		}
	}
	return b.String()
}
