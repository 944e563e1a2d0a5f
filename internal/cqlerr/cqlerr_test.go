package cqlerr

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/tailroute/tailroute/internal/track"
)

type reqErr struct{ code int }

func (e reqErr) Error() string { return fmt.Sprintf("code %#x", e.code) }
func (e reqErr) Code() int     { return e.code }

var (
	errNotFound   = errors.New("not found")
	errNoResponse = errors.New("no response")
	sentinels     = Sentinels{NotFound: errNotFound, NoResponse: errNoResponse}
)

func TestClassify(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		ctx  context.Context
		err  error
		want track.Outcome
	}{
		{nil, nil, track.Success},
		{nil, errNotFound, track.Success},
		{nil, reqErr{CodeSyntax}, track.Success},
		{nil, reqErr{0x25ff}, track.Success},
		{nil, fmt.Errorf("wrapped: %w", reqErr{CodeInvalid}), track.Success},
		{nil, context.Canceled, track.Cancelled},
		{nil, fmt.Errorf("wrapped: %w", context.DeadlineExceeded), track.Cancelled},
		{done, reqErr{CodeOverloaded}, track.Cancelled},
		{nil, reqErr{CodeOverloaded}, track.Failure},
		{nil, reqErr{CodeReadTimeout}, track.Failure},
		{nil, reqErr{0x2600}, track.Failure},
		{nil, errNoResponse, track.Lost},
		{nil, errors.New("connection refused"), track.Lost},
	} {
		assert.Equal(t, c.want, Classify[RequestError](c.ctx, c.err, sentinels), "%v", c.err)
	}
}

func TestIsHostError(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{context.Canceled, false},
		{errNotFound, false},
		{reqErr{CodeInvalid}, false},
		{reqErr{CodeSyntax}, false},
		{reqErr{CodeOverloaded}, true},
		{reqErr{CodeServer}, true},
		{fmt.Errorf("wrapped: %w", reqErr{CodeWriteFailure}), true},
		{errNoResponse, true},
		{errors.New("connection refused"), true},
	} {
		assert.Equal(t, c.want, IsHostError[RequestError](c.err, errNotFound), "%v", c.err)
	}
}

func TestPollPermanent(t *testing.T) {
	assert.True(t, PollPermanent[RequestError](reqErr{CodeInvalid}))
	assert.True(t, PollPermanent[RequestError](reqErr{CodeUnauthorized}))
	assert.True(t, PollPermanent[RequestError](reqErr{CodeSyntax}))
	assert.False(t, PollPermanent[RequestError](reqErr{CodeOverloaded}))
	assert.False(t, PollPermanent[RequestError](errors.New("timeout")))
}
