package vsim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Processes park on timers and sleeps, a runner sleeps inside an event
// (the engine's backpressure wait in Pick), and every step happens at its
// virtual time, in the order scheduled.
func TestSchedProcessesTimersAndSleep(t *testing.T) {
	var log []string
	var s *sched
	say := func(what string) { log = append(log, fmt.Sprintf("%v %s", s.Now(), what)) }
	s = newSched(func(ev *event) {
		switch ev.i {
		case 1: // an event whose handler sleeps
			say("handler sleeps")
			s.Sleep(15 * time.Millisecond)
			say("handler wakes")
		case 2:
			say("event 2")
		}
	})
	s.spawn(func() {
		tm := s.NewTimer(10 * time.Millisecond)
		for i := 0; i < 3; i++ {
			<-tm.C()
			say(fmt.Sprintf("timer %d", i))
			tm.Reset(10 * time.Millisecond)
		}
		tm.Stop()
		s.Sleep(time.Millisecond)
		say("process ends")
	})
	s.at(5*time.Millisecond, event{kind: evModel, i: 1})
	s.at(12*time.Millisecond, event{kind: evModel, i: 2})
	go s.run()
	<-s.done
	assert.Equal(t, []string{
		"5ms handler sleeps",
		"10ms timer 0",
		"12ms event 2",
		"20ms handler wakes",
		"20ms timer 1",
		"30ms timer 2",
		"31ms process ends",
	}, log)
	assert.Zero(t, s.procs)
}
