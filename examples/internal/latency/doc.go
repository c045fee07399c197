// Package latency is what examples/latency-test and examples/latency-bench
// share: parsing their task, load and body specifications, running a set of
// periodic measurement tasks on rtapi, generating the loads the seeds
// describe, and writing results as cyclictest lines, cyclictest --json
// documents, percentile tables and SVG plots. The recording formats users
// read back (latency-test's -json document and cyclictest's histogram
// file) live in the public package rtapi/latencyfile.
//
// Nothing here is RT-safe except the task bodies Run installs (a busy wait
// on the task's clock and one atomic store per cycle); everything else is
// set-up and reporting code that allocates freely.
//
// Formats kept byte-compatible with rt-tests 2.x cyclictest, so that
// scripts written for it keep working:
//
//	T: 0 (12345) P:98 I:1000 C:  10000 Min:      3 Act:    5 Avg:    6 Max:      41
package latency
