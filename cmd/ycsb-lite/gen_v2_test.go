package main

import (
	"bytes"
	"flag"
	"go/format"
	"os"
	"regexp"
	"strings"
	"testing"
)

// The -driver v2 bindings of the datastax port, the peer ports and the
// oracle are generated from their gocql v1 bindings (datastax.go, peers.go,
// oracle.go): the same code over the v2 driver's types. TestGeneratedV2 fails when a generated file is not
// what its source generates; go generate (or this test with -args -update)
// rewrites them.

var updateGenerated = flag.Bool("update", false, "rewrite the files generated from the gocql v1 bindings")

// v2Generated maps each hand-written gocql v1 binding to the file generated from it.
var v2Generated = map[string]string{"datastax.go": "datastax_v2.go", "oracle.go": "oracle_v2.go", "peers.go": "peers_v2.go"}

// v2Renames are the identifiers of the v1 bindings and their v2 names.
var v2Renames = []string{
	"datastaxPolicy", "newDatastaxPolicy", "dsSelected", "dsObserver", "wireDatastax",
	"oraclePolicy", "newOraclePolicy", "markedFallback", "fallbackHost", "roundRobin",
	"peerPolicy", "newPeerPolicy", "peerObserver", "wirePeer",
}

// generateV2 returns the v2 binding generated from the v1 binding src.
func generateV2(name string, src []byte) ([]byte, error) {
	s := string(src)
	s = strings.Replace(s, `"github.com/gocql/gocql"`, `gocql2 "github.com/apache/cassandra-gocql-driver/v2"`, 1)
	s = strings.ReplaceAll(s, "gocql.ExecutableQuery", "gocql.ExecutableStatement")
	s = regexp.MustCompile(`\bgocql\.`).ReplaceAllString(s, "gocql2.")
	s = regexp.MustCompile(`\bgocql v1\b`).ReplaceAllString(s, "the v2 driver")
	s = regexp.MustCompile(`\bisFallbackV1\b`).ReplaceAllString(s, "isFallbackV2")
	for _, id := range v2Renames {
		s = regexp.MustCompile(`\b`+id+`\b`).ReplaceAllString(s, id+"V2")
	}
	s = regexp.MustCompile(`(?m)^//go:generate .*\n\n|^// .*_v2\.go is generated from this file.*\n`).ReplaceAllString(s, "")
	head := "// Code generated from " + name + " by TestGeneratedV2 (gen_v2_test.go); DO NOT EDIT.\n\n"
	return format.Source([]byte(head + s))
}

func TestGeneratedV2(t *testing.T) {
	for src, dst := range v2Generated {
		in, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		want, err := generateV2(src, in)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if *updateGenerated {
			if err := os.WriteFile(dst, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if got, err := os.ReadFile(dst); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is not what %s generates (%v): run go generate ./cmd/ycsb-lite", dst, src, err)
		}
	}
}
