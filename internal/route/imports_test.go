package route

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Driver module paths: the core must build without either.
const (
	driverV1 = "github.com/gocql/gocql"
	driverV2 = "github.com/apache/cassandra-gocql-driver/v2"
)

// deps lists the transitive imports of the packages (go list -deps).
func deps(t *testing.T, pkgs ...string) []string {
	t.Helper()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := exec.LookPath(goBin); err != nil {
		goBin = "go"
	}
	args := append([]string{"list", "-deps", "-test=false"}, pkgs...)
	out, err := exec.Command(goBin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %v: %v\n%s", pkgs, err, out)
	}
	return strings.Fields(string(out))
}

func importsModule(list []string, mod string) bool {
	for _, p := range list {
		if p == mod || strings.HasPrefix(p, mod+"/") {
			return true
		}
	}
	return false
}

// TestCoreImportsNoDriver: the driver-free core (this package, internal/core,
// internal/hedge,
// tracker) imports neither driver, and each driver's adapters build
// without the other driver.
func TestCoreImportsNoDriver(t *testing.T) {
	const mod = "github.com/tailroute/tailroute/"
	core := deps(t, mod+"internal/route", mod+"internal/core", mod+"tracker", mod+"internal/murmur3", mod+"internal/hedge", mod+"policy/promstats", mod+"speculative/promstats")
	if len(core) < 5 {
		t.Fatalf("go list -deps returned %d packages: %v", len(core), core)
	}
	for _, d := range []string{driverV1, driverV2} {
		if importsModule(core, d) {
			t.Errorf("the core imports %s", d)
		}
	}
	for _, c := range adapters {
		list := deps(t, mod+c.pkg)
		if !importsModule(list, c.driver) {
			t.Errorf("%s does not import its driver %s (check the list)", c.pkg, c.driver)
		}
		if importsModule(list, c.other) {
			t.Errorf("%s imports the other driver %s", c.pkg, c.other)
		}
	}
}

// adapters are the driver-specific packages and the driver each may use.
var adapters = []struct{ pkg, driver, other string }{
	{"policy", driverV1, driverV2},
	{"speculative", driverV1, driverV2},
	{"apache/policy", driverV2, driverV1},
	{"apache/speculative", driverV2, driverV1},
}
