//go:build linux

package hal

import (
	"fmt"
	"testing"

	"github.com/gortapi/gortapi/rtapi/ipc"
)

// threadWith builds a thread of n functions publishing into a seqlock on
// the heap, without an RT: enough to drive publish and account directly.
func threadWith(n int) (*Thread, *chain) {
	th := &Thread{name: "servo", periodNs: 1e6, seq: new(ipc.Seqlock[threadRecord])}
	copy(th.nameBuf[:], th.name)
	c := &chain{gen: 1}
	for i := range n {
		f := &Funct{name: fmt.Sprintf("comp.%d.update", i), index: 10 + i, slot: &functSlot{}, times: privateTimes()}
		c.functs = append(c.functs, f)
	}
	return th, c
}

func TestPublishRoundTripAndNoAllocs(t *testing.T) {
	th, c := threadWith(3)
	c.functs[1].account(1500, true)
	c.functs[1].publishAcct()
	th.beat.Store(7)
	allocs := testing.AllocsPerRun(100, func() { th.publish(c, stateRunning) })
	if allocs != 0 {
		t.Fatalf("publish allocates %v times", allocs)
	}
	var r threadRecord
	th.seq.Read(&r)
	if r.NFuncts != 3 || r.Beat != 7 || r.Chain[0] != 10 || r.Chain[2] != 12 || cstring(r.Name[:]) != "servo" {
		t.Fatalf("record read back wrong: %+v", r)
	}
	if s := c.functs[1].Stats(); s.Time != 1500 || s.Overruns != 1 || s.Calls != 1 {
		t.Fatalf("counters: %+v", s)
	}
	// A shorter chain says how many function records are valid.
	c.functs = c.functs[:1]
	th.publish(c, stateStopped)
	th.seq.Read(&r)
	if r.NFuncts != 1 || r.State != stateStopped {
		t.Fatalf("record after shrinking: %+v", r)
	}
}

// BenchmarkPublish measures a thread's publication, which runs at most
// once per PublishEvery (1 ms by default) on the real-time thread.
func BenchmarkPublish(b *testing.B) {
	for _, n := range []int{4, 16, MaxFuncts} {
		b.Run(fmt.Sprintf("functs=%d", n), func(b *testing.B) {
			th, c := threadWith(n)
			b.ReportAllocs()
			for b.Loop() {
				th.publish(c, stateRunning)
			}
		})
	}
}

// BenchmarkAccount measures the bookkeeping after each function call
// (the clock read around it is the flavor's): the HAL's .time and
// .tmax, and the thread's own counters.
func BenchmarkAccount(b *testing.B) {
	f := &Funct{slot: &functSlot{}, times: privateTimes()}
	b.ReportAllocs()
	var d int64
	for b.Loop() {
		d++
		f.account(d&1023, d&4095 == 0)
	}
}
