// Package sim is a simulated Cassandra cluster that speaks the CQL native
// protocol (v3/v4, via github.com/datastax/go-cassandra-native-protocol), so
// the real gocql driver, the real network stack and our routing policy are
// exercised end to end. See the package documentation at the end of the
// work for limits.
package sim
