package policy

import (
	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute/internal/route"
)

// keyspaceFunc adapts gocql's keyspace metadata to the router's.
func keyspaceFunc(f func(string) (*gocql.KeyspaceMetadata, error)) route.KeyspaceFunc {
	return func(ks string) (string, map[string]any, error) {
		md, err := f(ks)
		if err != nil {
			return "", nil, err
		}
		if md == nil {
			return "", nil, nil // no placement
		}
		return md.StrategyClass, md.StrategyOptions, nil
	}
}
