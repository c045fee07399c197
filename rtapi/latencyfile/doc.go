// Package latencyfile reads and writes recorded wake-up latency, and turns
// a recording into sim jitter, so that a test on the sim flavor can replay
// the latency a real machine showed.
//
// It handles a Recording, the JSON examples/latency-test -json writes (Read,
// Recording.Write), and cyclictest's -h histogram file, byte for byte
// (ReadHistfile, WriteHistfile). ReadLatency takes either, or a
// hist.Snapshot as JSON; ReadJitter returns it as sim.Jitter:
//
//	f, err := os.Open("testdata/latency-1ms.json") // latency-test -json on the target
//	...
//	j, err := latencyfile.ReadJitter(f, time.Millisecond)
//	...
//	err = clock.SetTask(task, sim.TaskConfig{Jitter: j})
//
// Durations are integer nanoseconds (JSON keys ending in _ns); histograms
// have 1 µs buckets from 0.
//
// Every call allocates and does I/O, and is safe for concurrent use. A file
// is untrusted input: a malformed or implausible one is an error, never a
// panic, and costs memory in proportion to its length.
//
// ExampleReadJitter and ExampleWriteHistfile (example_test.go) replay a
// recording as jitter and write cyclictest's histogram file.
package latencyfile
