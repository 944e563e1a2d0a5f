package vsim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Processes park on timers and every step happens at its virtual time,
// in the order scheduled (at the same instant, the one scheduled first
// runs first).
func TestSchedProcessesTimers(t *testing.T) {
	var log []string
	var s *sched
	say := func(what string) { log = append(log, fmt.Sprintf("%v %s", s.Now(), what)) }
	s = newSched(func(ev *event) { say(fmt.Sprintf("event %d", ev.i)) })
	s.spawn(func() {
		tm := s.NewTimer(10 * time.Millisecond)
		for i := 0; i < 3; i++ {
			<-tm.C()
			say(fmt.Sprintf("timer %d", i))
			tm.Reset(10 * time.Millisecond)
		}
		tm.Stop()
		say("process ends")
	})
	s.at(5*time.Millisecond, event{kind: evModel, i: 1})
	s.at(20*time.Millisecond, event{kind: evModel, i: 2})
	go s.run()
	<-s.done
	assert.Equal(t, []string{
		"5ms event 1",
		"10ms timer 0",
		"20ms event 2", // scheduled before the timer was reset at 10ms
		"20ms timer 1",
		"30ms timer 2",
		"30ms process ends",
	}, log)
	assert.Zero(t, s.procs)
}
