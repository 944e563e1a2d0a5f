package promlabels

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
)

func TestConst(t *testing.T) {
	assert.Equal(t, prometheus.Labels{"session": "default"}, Const(nil))
	assert.Equal(t, prometheus.Labels{"session": "a"}, Const([]Option{WithSession("a")}))
	assert.Equal(t, prometheus.Labels{"session": "b", "driver": "v2"}, Const([]Option{WithLabels(prometheus.Labels{"driver": "v2", "session": "b"})}),
		"a session key of WithLabels is the session")
	assert.Equal(t, prometheus.Labels{"session": "a", "driver": "v2"},
		Const([]Option{WithSession("a"), WithLabels(prometheus.Labels{"driver": "v2", "session": "b"})}), "WithSession wins")
}
