package latency

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
)

// Session.Close must report the P each task had while the set ran
// (Stats.OwnP). Stopping the tasks one after another let a fast task end,
// and free the P it kept busy, while a slower task still ran: that task
// was handed the P for its last moments and reported one of its own
// (latency-bench's multi group showed it). The session here is base (100 µs, keeps a P
// busy) and servo (1 ms); the host adds a task of its own, user (2 ms),
// on the session's RT, which Session.Close leaves to rtapi's Close. With
// GOMAXPROCS 2 nobody gets a P: one is kept for the rest of the program,
// base keeps the other busy. Stopping the session's tasks first made base
// end while user certainly still ran, so user was always promoted; servo
// was promoted when base ended before its Stop.
func TestSessionCloseKeepsThePsOfTheRun(t *testing.T) {
	rttest.RequireRT(t)
	if os.Getenv("RTAPI_RUNTIME_GUARD") != "" {
		t.Skip("the runtime guard's default is changed in the environment: the test needs the default guard")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	t.Setenv("GOMAXPROCS", "2") // no spare P per task: exactly 2 Ps
	s, err := Start(Config{
		Options:  rtapi.Options{Flavor: "rt-preempt", LockMemory: rtapi.Off},
		Tasks:    []TaskDef{{Name: "base", Period: 100 * time.Microsecond}, {Name: "servo", Period: time.Millisecond}},
		Watchdog: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	user, err := s.RT().NewTask(rtapi.TaskSpec{Name: "user", Period: 2 * time.Millisecond}, func(tc *rtapi.TaskContext) error {
		for tc.WaitPeriod() {
		}
		return nil
	})
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	if err := user.Start(); err != nil {
		s.Close()
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for user.Stats().Cycles < 10 || s.Snapshot()[1].Cycles < 10 {
		if time.Now().After(deadline) {
			s.Close()
			t.Fatal("tasks did not run 10 cycles in 20 s")
		}
		time.Sleep(time.Millisecond)
	}
	const noP = "no: "
	running := map[string]string{"servo": s.Snapshot()[1].OwnP, "user": user.Stats().OwnP}
	for name, ownP := range running {
		if !strings.HasPrefix(ownP, noP) {
			s.Close()
			t.Fatalf("%s while the set runs: own P %q, want %q...", name, ownP, noP)
		}
	}

	res, err := s.Close()
	if err != nil {
		t.Fatal(err)
	}
	if ownP := res.Tasks[1].OwnP; !strings.HasPrefix(ownP, noP) {
		t.Errorf("servo's result: own P %q, want %q... as while the set ran", ownP, noP)
	}
	if ownP := user.Stats().OwnP; !strings.HasPrefix(ownP, noP) {
		t.Errorf("user, stopped by the session's Close: own P %q, want %q... as while the set ran", ownP, noP)
	}
}
