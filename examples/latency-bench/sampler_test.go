package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// The sampler group's .hal text loads, and links every sampler pin.
func TestSamplerHALLoads(t *testing.T) {
	for _, sampled := range []bool{false, true} {
		rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 1}})
		if err != nil {
			t.Fatal(err)
		}
		h, err := hal.New(rt, hal.Options{ShmDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.NewThreadSpec(hal.ThreadSpec{Name: "base", Period: 50 * time.Microsecond, Priority: hal.RateMonotonic}); err != nil {
			t.Fatal(err)
		}
		cmds, err := halfile.Parse("sampler-group.hal", strings.NewReader(samplerHAL(sampled)))
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Load(io.Discard, cmds); err != nil {
			t.Fatal(err)
		}
		th, _ := h.Thread("base")
		if got := len(th.Functs()); got != map[bool]int{false: 1, true: 2}[sampled] {
			t.Errorf("sampled=%v: %d functions on the thread", sampled, got)
		}
		s, err := h.View().Read()
		if err != nil {
			t.Fatal(err)
		}
		linked := 0
		for _, p := range s.Pins {
			if strings.HasPrefix(p.Name, "sampler.0.pin.") && p.Signal != "" {
				linked++
			}
		}
		if linked != samplerPins {
			t.Errorf("%d sampler pins linked, want %d", linked, samplerPins)
		}
		h.Close()
		rt.Close()
	}
}

// The sampler group's goal reads its p99.9 ratio.
func TestSamplerGoal(t *testing.T) {
	res := results{Groups: []groupResult{{ID: "sampler", Ratios: []ratioResult{{Label: "sampler / no sampler", P999: 1.04}}}}}
	var found bool
	for _, g := range perfGoals(res) {
		if strings.Contains(g.Goal, "sampler of 16 pins") {
			found = true
			if !g.Met || g.Measured != 1.04 {
				t.Errorf("goal %+v", g)
			}
		}
	}
	if !found {
		t.Fatal("no sampler goal")
	}
}
