package route

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/tailroute/tailroute/tracker"
)

// AddStage sums the two stages read and takes W_s from ReadStage's
// active_tasks_limit (MutationStage's without a ReadStage row); a limit of
// 0 (null), negative or absurd leaves W_s unknown.
func TestThreadPoolSampleWorkers(t *testing.T) {
	var s ThreadPoolSample
	assert.False(t, s.AddStage("CompactionExecutor", 1, 2, 3, 4), "other stages are not read")
	assert.True(t, s.AddStage("MutationStage", 1, 8, 2, 100))
	assert.EqualValues(t, 8, s.Workers, "no ReadStage row yet: MutationStage's")
	assert.True(t, s.AddStage("ReadStage", 3, 32, 1, 900))
	assert.Equal(t, ThreadPoolSample{Active: 4, Pending: 3, Completed: 1000, Workers: 32}, s)

	s = ThreadPoolSample{}
	s.AddStage("ReadStage", 3, 32, 1, 900)
	s.AddStage("MutationStage", 1, 8, 2, 100)
	assert.EqualValues(t, 32, s.Workers, "ReadStage's wins in any row order")

	for _, bad := range []int{0, -4, tracker.MaxServerWorkers + 1, 1 << 40} {
		s = ThreadPoolSample{}
		assert.True(t, s.AddStage("ReadStage", 1, bad, 0, 10))
		assert.Zero(t, s.Workers, "limit %d: unknown", bad)
		assert.Equal(t, 1.0, s.Active, "the row's load still counts")
	}
}

// ScanThreadPools reads the query's columns in order (name, active_tasks,
// active_tasks_limit, pending_tasks, completed_tasks) and counts the stage
// rows.
func TestScanThreadPools(t *testing.T) {
	rows := [][]any{
		{"CompactionExecutor", 1, 2, 0, int64(5)},
		{"ReadStage", 3, 0, 2, int64(70)}, // null active_tasks_limit scans as 0
		{"MutationStage", 1, 16, 0, int64(30)},
	}
	i := 0
	scan := func(dest ...any) bool {
		if i == len(rows) {
			return false
		}
		r := rows[i]
		i++
		*dest[0].(*string) = r[0].(string)
		*dest[1].(*int), *dest[2].(*int), *dest[3].(*int) = r[1].(int), r[2].(int), r[3].(int)
		*dest[4].(*int64) = r[4].(int64)
		return true
	}
	smp, found := ScanThreadPools(scan)
	assert.Equal(t, 2, found)
	assert.Equal(t, ThreadPoolSample{Active: 4, Pending: 2, Completed: 100, Workers: 16}, smp,
		"ReadStage's limit unknown: MutationStage's")
}

// ReadPoll accepts a sample only from the polled host, with at least one
// stage row and no iterator error.
func TestReadPoll(t *testing.T) {
	rows := func(names ...string) func(dest ...any) bool {
		i := 0
		return func(dest ...any) bool {
			if i == len(names) {
				return false
			}
			*dest[0].(*string) = names[i]
			*dest[1].(*int), *dest[2].(*int), *dest[3].(*int) = 1, 4, 0
			*dest[4].(*int64) = 10
			i++
			return true
		}
	}
	ok := func() error { return nil }
	by := func(id string) func() string { return func() string { return id } }

	smp, err := ReadPoll(rows("ReadStage"), ok, by("h1"), "h1")
	assert.NoError(t, err)
	assert.Equal(t, ThreadPoolSample{Active: 1, Completed: 10, Workers: 4}, smp)
	_, err = ReadPoll(rows("ReadStage"), ok, by(""), "h1")
	assert.NoError(t, err, "the driver did not say who answered")

	_, err = ReadPoll(rows("ReadStage"), ok, by("h2"), "h1")
	assert.ErrorContains(t, err, "poll of h1 answered by h2")
	_, err = ReadPoll(rows("CompactionExecutor"), ok, by("h1"), "h1")
	assert.ErrorIs(t, err, errNoStages)
	closeErr := errors.New("timeout")
	_, err = ReadPoll(rows("ReadStage"), func() error { return closeErr }, by("h1"), "h1")
	assert.ErrorIs(t, err, closeErr)
}
