// Package latency is what examples/latency-test and examples/latency-bench
// share: parsing their task, load and body specifications, running a set of
// periodic measurement tasks on rtapi, generating the loads the seeds
// describe, and writing results as cyclictest lines, cyclictest histogram
// files, percentile tables and SVG plots.
//
// Nothing here is RT-safe except the task bodies Run installs (a busy wait
// on the task's clock and one atomic store per cycle); everything else is
// set-up and reporting code that allocates freely.
//
// Formats kept byte-compatible with rt-tests 2.x cyclictest, so that
// scripts written for it keep working:
//
//	T: 0 (12345) P:98 I:1000 C:  10000 Min:      3 Act:    5 Avg:    6 Max:      41
//
// and the -h/--histfile layout ("# Histogram", one "%06d %06d" row per 1 µs
// bucket with tab-separated columns per thread, then the Total, Min, Avg,
// Max, Overflows and overflow-cycle footer lines).
package latency
