// The poll's query (ThreadPoolsQuery) and the reading of its answer: the
// thread_pools rows of one host summed into a ThreadPoolSample.

package route

import (
	"errors"
	"fmt"
	"time"

	"github.com/tailroute/tailroute/tracker"
)

// ThreadPoolsQuery is the poll: each host's own thread pools (a
// node-local virtual table of Cassandra 4.0+).
const ThreadPoolsQuery = "SELECT name, active_tasks, active_tasks_limit, pending_tasks, completed_tasks FROM system_views.thread_pools"

// ThreadPoolSample is one poll of a host: the sums over ReadStage and
// MutationStage, at clock time At, and the read stage's workers.
type ThreadPoolSample struct {
	At        time.Duration
	Active    float64
	Pending   float64
	Completed int64
	Own       float64 // w*os_s: what C3's qhat already counts for the host during the poll
	// Workers is W_s: active_tasks_limit of ReadStage (of MutationStage
	// when the host has no ReadStage row); 0 when unknown (null, zero,
	// negative or above tracker.MaxServerWorkers).
	Workers int64
	// Answers are the client's own successful answers from the host up to
	// the sample (cumulative: track.Host.Answers). The poller fills them
	// in.
	Answers uint64
}

// ScanThreadPools reads the rows of ThreadPoolsQuery with scan (the
// driver's Iter.Scan) and returns their sample and the number of stage
// rows read (AddStage).
func ScanThreadPools(scan func(dest ...any) bool) (smp ThreadPoolSample, found int) {
	var (
		name                   string
		active, limit, pending int
		completed              int64
	)
	for scan(&name, &active, &limit, &pending, &completed) {
		if smp.AddStage(name, active, limit, pending, completed) {
			found++
		}
	}
	return smp, found
}

// ReadPoll finishes a poll query of the host with the router's id id:
// it scans the rows (ScanThreadPools), closes the iterator and checks the
// answer, so that a sample never counts for the wrong host: the iterator's
// error, an answer from another host than id (answeredBy returns the id of
// the host that answered, "" when the driver does not say), or no
// ReadStage or MutationStage row is an error.
func ReadPoll(scan func(dest ...any) bool, closeIter func() error, answeredBy func() string, id string) (ThreadPoolSample, error) {
	smp, found := ScanThreadPools(scan)
	if err := closeIter(); err != nil {
		return smp, err
	}
	if by := answeredBy(); by != "" && by != id {
		return smp, fmt.Errorf("poll of %s answered by %s", id, by)
	}
	if found == 0 {
		return smp, errNoStages
	}
	return smp, nil
}

var errNoStages = errors.New("policy: system_views.thread_pools has no ReadStage or MutationStage row")

// AddStage adds one row of system_views.thread_pools to the sample and
// reports whether it was one of the stages read (ReadStage, MutationStage).
func (s *ThreadPoolSample) AddStage(name string, active, limit, pending int, completed int64) bool {
	if name != "ReadStage" && name != "MutationStage" {
		return false
	}
	s.Active += float64(active)
	s.Pending += float64(pending)
	s.Completed += completed
	if limit < 1 || limit > tracker.MaxServerWorkers {
		return true
	}
	if name == "ReadStage" || s.Workers == 0 {
		s.Workers = int64(limit)
	}
	return true
}
