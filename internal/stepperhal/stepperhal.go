// Package stepperhal holds issue 41's stepper configuration, shared by
// rtapi/hal/comps's base-thread benchmark (sim flavor) and
// examples/latency-bench's stepper25 group (real flavor), so both run
// the same text.
package stepperhal

import _ "embed"

// Base is a stepper machine's components for a base thread named "base"
// and a servo thread named "servo", which the loader must create first:
// on base stepgen.make-pulses (3 channels: step/dir, step/dir,
// quadrature), encoder.update-counters (3 channels, looped back from the
// stepgens) and pwmgen.make-pulses (1 channel, pwm/dir); on servo
// stepgen.capture-position, encoder.capture-position,
// stepgen.update-freq and pwmgen.update. Every stepgen runs at 5000
// steps/s towards a position it never reaches, the pwmgen at a 50 %
// duty cycle.
//
//go:embed base.hal
var Base string

// Functions in each thread of Base, in order: base 3, servo 4. An
// empty chain of as many functions measures the threads' machinery
// alone.
const (
	BaseFuncts  = 3
	ServoFuncts = 4
)
