package latencyfile_test

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hist"
	"github.com/gortapi/gortapi/rtapi/latencyfile"
	"github.com/gortapi/gortapi/rtapi/sim"
)

// A sim test replays the wake-up latency a machine recorded: here a
// recording made in place (latency-test -json writes the same document),
// whose 1 ms task woke 40 µs late every time.
func ExampleReadJitter() {
	counts := make([]uint64, 1000) // 1 µs buckets up to 1 ms
	counts[40] = 1000
	recorded := hist.Snapshot{Width: time.Microsecond, Counts: counts,
		Count: 1000, Sum: 1000 * 40_000, Min: 40_000, Max: 40_000}
	var file bytes.Buffer
	rec := latencyfile.Recording{Tool: "gortapi latency-test", Tasks: []latencyfile.Task{{
		Name: "servo", Period: time.Millisecond,
		Latency: latencyfile.Series{Summary: latencyfile.Summarize(recorded), Histogram: recorded},
	}}}
	if err := rec.Write(&file); err != nil {
		fmt.Println(err)
		return
	}

	jitter, err := latencyfile.ReadJitter(&file, time.Millisecond)
	if err != nil {
		fmt.Println(err)
		return
	}
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 1}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Close()
	clock, err := sim.New(rt)
	if err != nil {
		fmt.Println(err)
		return
	}
	servo, err := rt.NewPeriodicTask(rtapi.TaskSpec{Name: "servo", Period: time.Millisecond}, func(*rtapi.Cycle) {})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := clock.SetTask(servo, sim.TaskConfig{Jitter: jitter}); err != nil {
		fmt.Println(err)
		return
	}
	_ = servo.Start()
	if err := clock.Advance(100 * time.Millisecond); err != nil {
		fmt.Println(err)
		return
	}
	st := servo.Stats()
	fmt.Printf("jitter: %v\n", jitter)
	fmt.Printf("replayed: latency min %v max %v\n", time.Duration(st.Latency.Min), time.Duration(st.Latency.Max))
	// Output:
	// jitter: histogram of 1000 samples, max 40µs
	// replayed: latency min 40µs max 40µs
}

// The histogram file layout of cyclictest -h / --histfile, one column per
// histogram; ReadHistfile reads it back, as it reads cyclictest's own.
func ExampleWriteHistfile() {
	// Latencies 1.2, 1.9, 2.5 and 9 µs in 1 µs buckets up to 4 µs.
	h := hist.Snapshot{Width: time.Microsecond, Counts: []uint64{0, 2, 1, 0}, Overflow: 1,
		Count: 4, Sum: 1_200 + 1_900 + 2_500 + 9_000, Min: 1_200, Max: 9_000}
	_ = latencyfile.WriteHistfile(os.Stdout, []hist.Snapshot{h}, nil)
	// Output:
	// # Histogram
	// 000000 000000
	// 000001 000002
	// 000002 000001
	// 000003 000000
	// # Total: 000000003
	// # Min Latencies: 00001
	// # Avg Latencies: 00003
	// # Max Latencies: 00009
	// # Histogram Overflows: 00001
	// # Histogram Overflow at cycle number:
	// # Thread 0: # 00001 others
}
