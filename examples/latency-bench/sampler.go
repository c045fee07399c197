package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	_ "github.com/gortapi/gortapi/rtapi/hal/comps"
	"github.com/gortapi/gortapi/rtapi/hal/sampler"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// The sampler group (issue 23): what sampling 16 pins every cycle costs a
// 20 kHz HAL thread.

// samplerPins is how many pins the sampler group's sampler captures.
const samplerPins = 16

// samplerGroup compares a 20 kHz HAL thread with and without a sampler.
func samplerGroup(b *bench) group {
	hal := func(pins int) func() (childResult, error) {
		return func() (childResult, error) {
			spec := childSpec{Kind: "hal", Flavor: "rt-preempt", Interval: 50 * time.Microsecond,
				Duration: b.s.duration, Priority: b.s.priority, CPU: b.s.cpu, SamplerPins: pins}
			return b.childRaw(spec)
		}
	}
	const without, with = "HAL 20 kHz, no sampler", "HAL 20 kHz, sampler of 16 pins"
	return group{
		id: "sampler", title: "A 20 kHz HAL thread sampling 16 pins vs no sampler", metric: "latency", needFIFO: true,
		desc: fmt.Sprintf("A HAL thread at 50 µs (rt-preempt flavor, pinned) runs siggen.0.update, whose outputs feed "+
			"%d sampler pins; one variant adds sampler.0 to the thread, the other does not. A goroutine in the same "+
			"process drains the ring as examples/halsampler would. The figure is the thread's wake-up latency; the "+
			"goal (issue 23) is a p99.9 ratio of at most 1.1. The per-pin cost alone is `go test -bench Sample ./rtapi/hal/sampler`.", samplerPins),
		variants: []variant{{name: without, run: hal(0)}, {name: with, run: hal(samplerPins)}},
		ratios:   []ratioSpec{{"sampler / no sampler", with, without}},
	}
}

// samplerHAL is the .hal text of the sampler group's child, for its
// thread "base": siggen's outputs fed to samplerPins float pins; sampled
// tells whether the sampler runs.
func samplerHAL(sampled bool) string {
	outs := []string{"sine", "cosine", "triangle", "sawtooth", "square"}
	var b strings.Builder
	fmt.Fprintf(&b, "loadrt siggen\nloadrt sampler cfg=%s depth=20000\nsetp siggen.0.frequency 100\n", strings.Repeat("f", samplerPins))
	for _, o := range outs {
		fmt.Fprintf(&b, "net %s siggen.0.%s", o, o)
		for i := range samplerPins {
			if outs[i%len(outs)] == o {
				fmt.Fprintf(&b, " sampler.0.pin.%d", i)
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("addf siggen.0.update base\n")
	if sampled {
		b.WriteString("addf sampler.0 base\n")
	}
	return b.String()
}

// childHAL runs the sampler group's HAL thread for spec.Duration, with a
// sampler of spec.SamplerPins pins (0: none) and a goroutine draining it.
func childHAL(spec childSpec) (childResult, error) {
	opts := rtapi.Options{Flavor: spec.Flavor}
	if spec.CPU >= 0 {
		opts.CPUs = []int{spec.CPU}
	}
	x, err := openHAL(opts, []hal.ThreadSpec{{Name: "base", Period: spec.Interval, Priority: spec.Priority}},
		samplerHAL(spec.SamplerPins > 0))
	if err != nil {
		return childResult{}, err
	}
	defer x.close()
	h, th := x.h, x.threads[0]
	rd, err := sampler.Attach(shm.Options{Dir: x.dir, Instance: x.rt.Instance()}, 0)
	if err != nil {
		return childResult{}, err
	}
	defer rd.Close()
	ctx, cancel := context.WithCancel(context.Background())
	drained := make(chan int64)
	go func() {
		var n int64
		for ctx.Err() == nil {
			if _, err := rd.Next(time.Now().Add(50 * time.Millisecond)); err == nil {
				n++
			} else if !errors.Is(err, rtapi.ErrTimeout) {
				break
			}
		}
		drained <- n
	}()
	if err := h.Start(); err != nil {
		cancel()
		<-drained
		return childResult{}, err
	}
	time.Sleep(spec.Duration)
	st := th.Task().Stats()
	stopErr := h.Stop()
	cancel()
	n := <-drained
	if stopErr != nil {
		return childResult{}, stopErr
	}
	note := fmt.Sprintf("%d samples drained", n)
	return childResult{Latency: st.Latency, Exec: st.Exec, Policy: st.Policy, Wake: st.Wake, Flavor: x.rt.Flavor().Name,
		Cycles: st.Cycles, Overruns: st.Overruns, Note: note}, nil
}
