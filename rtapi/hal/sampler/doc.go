// Package sampler is LinuxCNC's sampler(9) HAL component and the reader
// of its ring (halsampler(1)): it captures chosen pins at a thread's rate
// into shared memory, for another process to read without gaps.
//
// Load it with one channel per cfg string (rtapi/hal/comps registers it):
//
//	loadrt sampler cfg=ffb,ll depth=4000,100
//	addf sampler.0 servo-thread
//	net pos-cmd => sampler.0.pin.0
//
// cfg letters give the pins' types, one pin per letter: f or r float,
// b bit, s s32, u u32, l s64, k u64 (LinuxCNC's letters, either case; at
// most MaxPins).
// depth is the FIFO's depth (default 1000 per channel): as in LinuxCNC's
// hal_stream, which keeps one slot empty, it holds depth-1 samples.
// Channel N has the pins:
//
//	sampler.N.pin.M       in   the values to capture, in cfg order
//	sampler.N.enable      in   bit, TRUE at load: sample only while TRUE
//	sampler.N.full        out  bit, TRUE when a sample found no room
//	sampler.N.curr-depth  out  s32, samples in the ring now; depth when full
//	sampler.N.overruns    io   s32, samples dropped because the ring was full
//	sampler.N.sample-num  io   s32, the low 32 bits of the last cycle sampled
//
// and the function sampler.N. Each call counts the cycle and, when
// enabled, publishes one whole record of the pins' values with the cycle
// number (from 0), the cycle's time (the Func's now) and the samples
// dropped before it. When the ring is full the sample is dropped and
// counted, never waited for.
//
// The ring of channel N lives in the segment
// "/gortapi-<instance>-<Key+N as 8 hex digits>" (Component.NewSegment),
// removed when the HAL closes. Attach opens it from another process;
// examples/halsampler prints it.
//
// The package also holds LinuxCNC's streamer(9), the sampler's mirror
// (LoadStreamer; "loadrt streamer cfg=ffb depth=100"): a FIFO in shared
// memory that a Writer fills from another process (examples/halstreamer,
// whose lines ParseStreamLine reads) and the function streamer.N empties
// onto its pins, one sample a call. AppendLinuxCNC prints a value as
// LinuxCNC's halsampler does.
//
// Both keep one segment layout: a 256-byte header (geometry, cfg and the
// FIFO's indexes, Magic stored last), then the sampler's record ring or
// the streamer's FIFO. Attach and AttachWriter check the header the same
// way, against the geometry its own cfg and depth imply, and every index
// another process writes is checked before use.
//
// The sampler's and the streamer's functions are RT-safe. Attach, Reader,
// AttachWriter and Writer are for ordinary goroutines and treat the
// segment as untrusted input (docs/SECURITY.md).
package sampler
