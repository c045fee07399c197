package comps_test

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// Pins, parameters (names, types, directions) and functions of pwmgen,
// debounce and the logic components, as LinuxCNC's sources declare them.
func TestPwmLogicNames(t *testing.T) {
	r := load(t, servo+`
loadrt pwmgen output_type=0,1,2
loadrt debounce cfg=2,1
loadrt estop_latch
loadrt charge_pump
loadrt oneshot
loadrt flipflop
loadrt edge
loadrt toggle
loadrt timedelay
loadrt logic count=2 personality=0x1f02,0x103
loadrt updown names=cnt
`)
	common := []string{"curr-dc float OUT", "dither-pwm bit I/O", "enable bit IN", "max-dc float I/O", "min-dc float I/O",
		"offset float I/O", "pwm-freq float I/O", "scale float I/O", "value float IN"}
	with := func(extra ...string) []string {
		l := append(append([]string(nil), common...), extra...)
		sort.Strings(l)
		return l
	}
	pins := map[string][]string{
		"pwmgen.0":   with("pwm bit OUT"),
		"pwmgen.1":   with("dir bit OUT", "pwm bit OUT"),
		"pwmgen.2":   with("down bit OUT", "up bit OUT"),
		"debounce.0": {"0.in bit IN", "0.out bit OUT", "1.in bit IN", "1.out bit OUT"},
		"debounce.1": {"0.in bit IN", "0.out bit OUT"},
		"estop-latch.0": {"fault-in bit IN", "fault-out bit OUT", "ok-in bit IN", "ok-out bit OUT", "reset bit IN",
			"watchdog bit OUT"},
		"charge-pump": {"enable bit IN", "out bit OUT", "out-2 bit OUT", "out-4 bit OUT"},
		"oneshot.0": {"in bit IN", "out bit OUT", "out-not bit OUT", "reset bit IN", "time-left float OUT",
			"width float IN"},
		"flipflop.0":  {"clk bit IN", "data bit IN", "out bit I/O", "out-not bit I/O", "reset bit IN", "set bit IN"},
		"edge.0":      {"in bit IN", "out bit OUT", "out-invert bit OUT"},
		"toggle.0":    {"in bit IN", "out bit I/O"},
		"timedelay.0": {"elapsed float OUT", "in bit IN", "off-delay float IN", "on-delay float IN", "out bit OUT"},
		"logic.0":     {"and bit OUT", "in-00 bit IN", "in-01 bit IN", "nand bit OUT", "nor bit OUT", "or bit OUT", "xor bit OUT"},
		"logic.1":     {"and bit OUT", "in-00 bit IN", "in-01 bit IN", "in-02 bit IN"},
		"cnt":         {"count s32 OUT", "countdown bit IN", "countup bit IN", "reset bit IN"},
	}
	for p, want := range pins {
		assert.Equal(t, want, r.pinNames(p), p)
	}
	params := map[string][]string{
		"pwmgen.0":   nil,
		"debounce.0": {"delay s32 RW"},
		"oneshot.0":  {"falling bit RW", "retriggerable bit RW", "rising bit RW"},
		"edge.0":     {"both bit RW", "in-edge bit RW", "last-in bit RO", "out-width-ns s32 RW", "time-left-ns s32 RO"},
		"toggle.0":   {"debounce u32 RW"},
		"cnt":        {"clamp bit RW", "max s32 RW", "min s32 RW", "wrap bit RW"},
	}
	for p, want := range params {
		assert.Equal(t, want, r.paramNames(p), p)
	}
	var functs []string
	for _, f := range r.h.Functs() {
		functs = append(functs, f.Name())
	}
	assert.Equal(t, []string{"pwmgen.make-pulses", "pwmgen.update", "debounce.0", "debounce.1", "estop-latch.0",
		"charge-pump", "oneshot.0", "flipflop.0", "edge.0", "toggle.0", "timedelay.0", "logic.0", "logic.1", "cnt"}, functs)

	defaults := map[string]string{
		"pwmgen.0.scale": "1", "pwmgen.0.max-dc": "1", "pwmgen.0.min-dc": "0", "pwmgen.0.pwm-freq": "0",
		"pwmgen.0.offset": "0", "pwmgen.0.dither-pwm": "FALSE", "pwmgen.0.enable": "FALSE",
		"debounce.0.delay": "5", "estop-latch.0.ok-in": "TRUE", "estop-latch.0.fault-in": "FALSE",
		"estop-latch.0.ok-out": "FALSE", "estop-latch.0.fault-out": "TRUE", "charge-pump.enable": "TRUE",
		"oneshot.0.width": "0", "oneshot.0.retriggerable": "TRUE", "oneshot.0.rising": "TRUE",
		"oneshot.0.falling": "FALSE", "edge.0.both": "FALSE", "edge.0.in-edge": "TRUE", "edge.0.out-width-ns": "0",
		"toggle.0.debounce": "2", "timedelay.0.on-delay": "0.5", "timedelay.0.off-delay": "0.5",
		"cnt.max": "2147483647", "cnt.min": "0", "cnt.clamp": "FALSE", "cnt.wrap": "FALSE",
	}
	for name, want := range defaults {
		got, err := r.h.GetP(name)
		require.NoError(t, err)
		assert.Equal(t, want, got, name)
	}
}

// The loadrt arguments LinuxCNC takes, parsed as rtapi_app does (strtol
// base 0, comma lists), and the ones it refuses.
func TestPwmLogicLoadArgs(t *testing.T) {
	for _, tc := range []struct {
		comp string
		args []string
		ok   bool
	}{
		{"pwmgen", nil, false},                                       // no channels configured
		{"pwmgen", []string{"output_type=3"}, false},                 // bad output type
		{"pwmgen", []string{"output_type=0,-2"}, false},              // bad output type
		{"pwmgen", []string{"output_type=0,0,0,0,0,0,0,0,0"}, false}, // can only take 8
		{"pwmgen", []string{"output_type=x"}, false},
		{"pwmgen", []string{"output_type=0x2,-1,7"}, true}, // -1 ends the list
		{"pwmgen", []string{"output_type="}, true},         // strtol("") is 0
		{"pwmgen", []string{"count=1"}, false},
		{"debounce", nil, false},
		{"debounce", []string{"cfg=51"}, false},
		{"debounce", []string{"cfg=-1"}, false},
		{"debounce", []string{"cfg=50,0,9"}, true},      // 0 ends the list
		{"charge_pump", []string{"count=2"}, false},     // a singleton
		{"logic", []string{"personality=0x111"}, false}, // 17 inputs
		{"logic", []string{"names=a,b", "personality=0x102"}, true},
		{"logic", []string{"personality=012"}, true}, // octal: 10 inputs
		{"estop_latch", []string{"count=3"}, true},
		{"updown", []string{"num_chan=1"}, false},
	} {
		rt, err := rtapi.Open(rtapi.Options{Flavor: "sim"})
		require.NoError(t, err)
		h, err := hal.New(rt, hal.Options{})
		require.NoError(t, err)
		err = h.LoadRT(tc.comp, tc.args...)
		if tc.ok {
			assert.NoError(t, err, "%s %v", tc.comp, tc.args)
		} else {
			assert.ErrorIs(t, err, rtapi.ErrInvalid, "%s %v", tc.comp, tc.args)
		}
		_ = h.Close()
		_ = rt.Close()
	}
}

// On the sim flavor, through halcmd's path: a charge pump and a logic
// gate in one thread, cycle by cycle.
func TestPwmLogicOnSim(t *testing.T) {
	r := load(t, servo+`
loadrt charge_pump
loadrt logic personality=0x602
loadrt toggle
addf charge-pump servo
addf logic.0 servo
addf toggle.0 servo
net cp charge-pump.out => logic.0.in-00 toggle.0.in
setp logic.0.in-01 1
`)
	// cycle n: out = n&1; logic reads cp from the same cycle (it runs after);
	// toggle sees in TRUE on odd cycles only, never twice in a row.
	for n := 1; n <= 6; n++ {
		r.cycles("servo", 1)
		out := float64(n & 1)
		assert.Equal(t, out, r.get("charge-pump.out"), "cycle %d", n)
		assert.Equal(t, 1.0, r.get("logic.0.or"), "cycle %d", n)
		assert.Equal(t, 1-out, r.get("logic.0.xor"), "cycle %d", n)
		assert.Equal(t, 0.0, r.get("toggle.0.out"), "cycle %d", n)
	}
}
