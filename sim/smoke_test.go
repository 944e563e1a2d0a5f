package sim

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSmoke(t *testing.T) {
	c := startCluster(t, Config{Nodes: 3, Model: ServiceModel{ZeroService: true}})
	createYCSB(t, c, "ycsb", "{'class':'SimpleStrategy','replication_factor':2}", 3)
	s := newSession(t, c, "ycsb", true)
	require.NoError(t, s.Query("INSERT INTO usertable (y_id, field0, field1) VALUES (?, ?, ?)", "user1", "a", "b").Exec())
	var f0, f1 string
	require.NoError(t, s.Query("SELECT field0, field1 FROM usertable WHERE y_id = ?", "user1").Scan(&f0, &f1))
	require.Equal(t, "a", f0)
	require.Equal(t, "b", f1)
}
