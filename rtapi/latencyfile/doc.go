// Package latencyfile reads and writes recorded wake-up latency, and turns
// a recording into sim jitter, so that a test on the sim flavor can replay
// the latency a real machine showed.
//
// Two formats:
//
//   - a Recording: the JSON document examples/latency-test writes with
//     -json (Read, Recording.Write);
//   - cyclictest's histogram file, as rt-tests 2.x cyclictest writes it with
//     -h / --histfile (ReadHistfile, WriteHistfile), byte for byte.
//
// ReadLatency takes either, or a bare hist.Snapshot as JSON, and returns
// one latency histogram; ReadJitter returns it as sim.Jitter for
// sim.Controller.SetTask:
//
//	f, err := os.Open("testdata/latency-1ms.json") // latency-test -json on the target
//	...
//	j, err := latencyfile.ReadJitter(f, time.Millisecond)
//	...
//	err = clock.SetTask(task, sim.TaskConfig{Jitter: j})
//
// Durations are written as integer nanoseconds (JSON keys ending in _ns);
// histograms have 1 µs buckets from 0.
//
// Nothing here is RT-safe: every call allocates and does I/O. A file is
// untrusted input: a malformed or implausible one (no samples, no bucket
// width, more than 2^20 buckets (a second at 1 µs), a count that overflows) is an
// error, never a panic. Calls are safe for concurrent use; a Recording is a
// plain value the caller owns.
//
// ExampleReadJitter and ExampleWriteHistfile (example_test.go) replay a
// recording as jitter and write cyclictest's histogram file.
package latencyfile
