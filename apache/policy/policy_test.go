package policy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/track"
)

// TestClassify maps the v2 driver's errors as the v1 adapter does.
func TestClassify(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		ctx  context.Context
		err  error
		want track.Outcome
	}{
		{nil, nil, track.Success},
		{nil, gocql.ErrNotFound, track.Success},
		{nil, context.Canceled, track.Cancelled},
		{nil, fmt.Errorf("wrapped: %w", context.DeadlineExceeded), track.Cancelled},
		{done, errors.New("any"), track.Cancelled},
		{nil, gocql.ErrTimeoutNoResponse, track.Lost},
		{nil, &net.OpError{Op: "dial", Err: errors.New("refused")}, track.Lost},
	} {
		assert.Equal(t, c.want, classify(c.ctx, c.err), "%v", c.err)
	}
}

// TestOptionsValidated: options are validated once, by New, with the
// field and range named.
func TestOptionsValidated(t *testing.T) {
	_, err := New(tailroute.WithTailTerm(200), tailroute.WithMaxCandidates(0))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "TailTerm = 200, allowed 0..100")
	assert.Contains(t, err.Error(), "MaxCandidates = 0")
	p, err := New(tailroute.WithStrategy(tailroute.P2C))
	require.NoError(t, err)
	assert.Equal(t, tailroute.P2C, p.Strategy())
}
