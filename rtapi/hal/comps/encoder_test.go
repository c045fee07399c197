package comps_test

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// loadErr loads src on a fresh sim HAL and returns Load's error.
func loadErr(t *testing.T, src string) error {
	t.Helper()
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim"})
	require.NoError(t, err)
	defer func() { _ = rt.Close() }()
	h, err := hal.New(rt, hal.Options{})
	require.NoError(t, err)
	defer func() { _ = h.Close() }()
	cmds, err := halfile.Parse("x.hal", strings.NewReader(src))
	require.NoError(t, err)
	return h.Load(io.Discard, cmds)
}

// encoder.c and sim_encoder.c's rtapi_app_main: num_chan= or names=,
// exclusive, at most 8; num_chan=0 is the default; names= counts up to
// the first empty name. Their refusals are LinuxCNC's, and count= is
// not one of their arguments.
func TestEncoderLoadArgs(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]string{
		"loadrt encoder num_chan=2 names=a":            "num_chan= and names= are mutually exclusive",
		"loadrt encoder num_chan=9":                    "invalid number of channels: 9",
		"loadrt encoder num_chan=-1":                   "invalid number of channels: -1",
		"loadrt encoder num_chan=2x":                   "invalid for parameter",
		"loadrt encoder names=":                        "invalid number of channels: 0",
		"loadrt encoder names=,a":                      "invalid number of channels: 0",
		"loadrt encoder names=a,b,c,d,e,f,g,h,i":       "can only take 8 arguments",
		"loadrt encoder count=2":                       `unknown argument "count"`,
		"loadrt sim_encoder num_chan=9":                "invalid number of channels: 9",
		"loadrt sim_encoder num_chan=1 names=x":        "mutually exclusive",
		"loadrt sim_encoder count=1":                   `unknown argument "count"`,
		"loadrt encoder names=a,a":                     `"a.phase-A"`,
		"loadrt encoder\nloadrt encoder num_chan=1":    "encoder",
		"loadrt sim_encoder names=s,s":                 `"s.ppr"`,
		"loadrt sim_encoder num_chan=4294967305":       "invalid number of channels: 9", // a C int of 2^32+9
		"loadrt encoder num_chan=0x9":                  "invalid number of channels: 9",
		"loadrt encoder num_chan=011":                  "invalid number of channels: 9",
		"loadrt encoder num_chan=99999999999999999999": "invalid number of channels: -1", // LONG_MAX as int
	} {
		err := loadErr(t, src)
		assert.ErrorContains(t, err, want, src)
	}
	for src, want := range map[string][]string{
		"loadrt encoder":                    {"encoder.0", "encoder.1", "encoder.2"},
		"loadrt encoder num_chan=0":         {"encoder.0", "encoder.1", "encoder.2"},
		"loadrt encoder num_chan=":          {"encoder.0", "encoder.1", "encoder.2"},
		"loadrt encoder num_chan=8":         {"encoder.0", "encoder.7"},
		"loadrt encoder names=x,y":          {"x", "y"},
		"loadrt encoder names=x,,y":         {"x"},
		"loadrt encoder num_chan=0 names=x": {"x"},
		"loadrt sim_encoder":                {"sim-encoder.0"},
		"loadrt sim_encoder num_chan=2":     {"sim-encoder.0", "sim-encoder.1"},
		"loadrt sim_encoder names=s":        {"s"},
	} {
		r := load(t, src)
		for _, p := range want {
			assert.NotEmpty(t, r.pinNames(p), "%s: %s", src, p)
		}
		comp := strings.Fields(src)[1]
		pfx := map[string]string{"encoder": "encoder.", "sim_encoder": "sim-encoder."}[comp]
		if len(want) > 0 && strings.HasPrefix(want[0], pfx) {
			assert.Empty(t, r.pinNames(pfx+"8"), src)
		}
		if src == "loadrt encoder names=x,,y" {
			assert.Empty(t, r.pinNames("y"), "names stop at the first empty one")
		}
	}
}

// Every pin of encoder.c and sim_encoder.c with its type and direction,
// no parameters, their defaults and the functions' names.
func TestEncoderPinsAndDefaults(t *testing.T) {
	t.Parallel()
	r := load(t, "loadrt encoder num_chan=1\nloadrt sim_encoder\n")
	assert.Equal(t, []string{
		"counter-mode bit I/O", "counts s32 OUT", "counts-latched s32 OUT",
		"index-enable bit I/O", "latch-falling bit IN", "latch-input bit IN",
		"latch-rising bit IN", "min-speed-estimate float IN", "missing-teeth s32 IN",
		"phase-A bit IN", "phase-B bit IN", "phase-Z bit IN",
		"position float OUT", "position-interpolated float OUT", "position-latched float OUT",
		"position-scale float I/O", "rawcounts s32 OUT", "reset bit IN",
		"velocity float OUT", "velocity-rpm float OUT", "x4-mode bit I/O",
	}, r.pinNames("encoder.0"))
	assert.Empty(t, r.paramNames("encoder.0"))
	assert.Equal(t, []string{
		"phase-A bit OUT", "phase-B bit OUT", "phase-Z bit OUT", "ppr u32 I/O",
		"rawcounts s32 IN", "scale float I/O", "speed float IN",
	}, r.pinNames("sim-encoder.0"))
	assert.Empty(t, r.paramNames("sim-encoder.0"))
	for name, want := range map[string]float64{
		"encoder.0.x4-mode": 1, "encoder.0.latch-rising": 1, "encoder.0.latch-falling": 1,
		"encoder.0.min-speed-estimate": 1, "encoder.0.position-scale": 1,
		"encoder.0.counter-mode": 0, "encoder.0.index-enable": 0, "encoder.0.velocity": 0,
		"sim-encoder.0.scale": 1, "sim-encoder.0.speed": 0,
	} {
		assert.Equal(t, want, r.get(name), name)
	}
	ppr, err := r.h.GetP("sim-encoder.0.ppr")
	require.NoError(t, err)
	assert.Equal(t, "100", ppr)
	var functs []string
	for _, f := range r.h.Functs() {
		functs = append(functs, f.Name())
	}
	assert.ElementsMatch(t, []string{
		"encoder.update-counters", "encoder.capture-position",
		"sim-encoder.make-pulses", "sim-encoder.update-speed",
	}, functs)
}

// encRig is one encoder channel with update-counters then
// capture-position on one 1 ms thread t.
func encRig(t *testing.T, extra string) *rig {
	return load(t, `loadrt threads name1=t period1=1000000
loadrt encoder num_chan=1
addf encoder.update-counters t
addf encoder.capture-position t
`+extra)
}

// stepAB sets the inputs and runs one cycle.
func (r *rig) stepAB(a, b bool) {
	r.t.Helper()
	r.setp("encoder.0.phase-A", a)
	r.setp("encoder.0.phase-B", b)
	r.cycles("t", 1)
}

// steps runs a sequence of AB states ("10" is A high, B low), one a
// cycle, and returns rawcounts after each.
func (r *rig) steps(seq ...string) []float64 {
	r.t.Helper()
	var out []float64
	for _, s := range seq {
		r.stepAB(s[0] == '1', s[1] == '1')
		out = append(out, r.get("encoder.0.rawcounts"))
	}
	return out
}

var (
	fwd = []string{"10", "11", "01", "00"} // A leads B: counts up
	bwd = []string{"01", "11", "10", "00"}
)

func TestEncoderQuadratureX4(t *testing.T) {
	t.Parallel()
	r := encRig(t, "")
	assert.Equal(t, []float64{1, 2, 3, 4, 5, 6, 7, 8}, r.steps(append(fwd, fwd...)...))
	assert.Equal(t, 8.0, r.get("encoder.0.counts"))
	assert.Equal(t, []float64{7, 6, 5, 4}, r.steps(bwd...))
	// A glitch on one input counts up, then down.
	assert.Equal(t, []float64{5, 4}, r.steps("10", "00"))
	// Both inputs at once: lut_x4 counts nothing (encoder.c keeps no
	// error count either); the decoder takes the new state as its own.
	assert.Equal(t, []float64{4, 4, 4}, r.steps("11", "11", "00"))
	assert.Equal(t, []float64{4, 5}, r.steps("11", "01"))
	r.setp("encoder.0.position-scale", 4.0)
	r.cycles("t", 1)
	assert.Equal(t, 5.0, r.get("encoder.0.counts"))
	assert.Equal(t, 1.25, r.get("encoder.0.position"))
}

func TestEncoderQuadratureX1(t *testing.T) {
	t.Parallel()
	r := encRig(t, "setp encoder.0.x4-mode 0\n")
	// lut_x1 counts up on A rising from 00, down on B falling to 00.
	assert.Equal(t, []float64{1, 1, 1, 1, 2, 2, 2, 2}, r.steps(append(fwd, fwd...)...))
	assert.Equal(t, []float64{2, 2, 2, 1}, r.steps(bwd...))
	assert.Equal(t, 1.0, r.get("encoder.0.counts"))
}

func TestEncoderCounterMode(t *testing.T) {
	t.Parallel()
	r := encRig(t, "setp encoder.0.counter-mode 1\n")
	// Each rising edge of A counts up; B is ignored (x4-mode too).
	assert.Equal(t, []float64{1, 1, 1, 1, 2, 2, 3}, r.steps("10", "11", "01", "00", "11", "01", "10"))
	assert.Equal(t, []float64{3, 3, 3}, r.steps("00", "01", "00"))
	assert.Equal(t, 3.0, r.get("encoder.0.counts"))
}

// index-enable arms the index; on the next rising edge of phase-Z,
// update-counters takes rawcounts as the index count and
// capture-position clears index-enable, so counts restart at 0 there.
// rawcounts runs on. Without index-enable, Z does nothing.
func TestEncoderIndex(t *testing.T) {
	t.Parallel()
	r := encRig(t, "")
	r.setp("encoder.0.phase-Z", true)
	r.steps(fwd...)
	r.setp("encoder.0.phase-Z", false)
	r.steps("10")
	assert.Equal(t, 5.0, r.get("encoder.0.counts"), "Z without index-enable")
	r.setp("encoder.0.index-enable", true)
	r.steps("11")
	assert.True(t, r.get("encoder.0.index-enable") == 1)
	r.setp("encoder.0.phase-Z", true) // Z rises with the count to 7
	r.steps("01")
	assert.Equal(t, 7.0, r.get("encoder.0.rawcounts"))
	assert.Equal(t, 0.0, r.get("encoder.0.counts"))
	assert.Equal(t, 0.0, r.get("encoder.0.position"))
	assert.Equal(t, 0.0, r.get("encoder.0.index-enable"), "cleared at the index edge")
	assert.Equal(t, []float64{8, 9}, r.steps("00", "10"))
	assert.Equal(t, 2.0, r.get("encoder.0.counts"))
	// Armed while Z is already high: only a new rising edge counts.
	r.setp("encoder.0.index-enable", true)
	r.steps("11", "01")
	assert.Equal(t, 4.0, r.get("encoder.0.counts"))
	r.setp("encoder.0.phase-Z", false)
	r.steps("00")
	r.setp("encoder.0.phase-Z", true)
	r.steps("01") // backwards: 12 -> 11, Z rises
	assert.Equal(t, 11.0, r.get("encoder.0.rawcounts"))
	assert.Equal(t, 0.0, r.get("encoder.0.counts"))
	assert.Equal(t, 0.0, r.get("encoder.0.index-enable"))
}

// reset holds counts at 0 (index count = raw count); rawcounts is never
// reset.
func TestEncoderReset(t *testing.T) {
	t.Parallel()
	r := encRig(t, "")
	r.steps(fwd...)
	r.setp("encoder.0.reset", true)
	r.steps("10", "11")
	assert.Equal(t, 6.0, r.get("encoder.0.rawcounts"))
	assert.Equal(t, 0.0, r.get("encoder.0.counts"))
	r.setp("encoder.0.reset", false)
	r.steps("01")
	assert.Equal(t, 1.0, r.get("encoder.0.counts"))
}

// latch-input's rising and falling edges (each enabled by latch-rising
// and latch-falling) latch the raw count; counts-latched and
// position-latched are it less the index count.
func TestEncoderLatch(t *testing.T) {
	t.Parallel()
	r := encRig(t, "setp encoder.0.position-scale 2\n")
	r.steps("10", "11")
	r.setp("encoder.0.latch-input", true)
	r.steps("01")
	assert.Equal(t, 3.0, r.get("encoder.0.counts-latched"))
	assert.Equal(t, 1.5, r.get("encoder.0.position-latched"))
	r.setp("encoder.0.latch-falling", false)
	r.setp("encoder.0.latch-input", false)
	r.steps("00")
	assert.Equal(t, 3.0, r.get("encoder.0.counts-latched"), "falling edge disabled")
	r.setp("encoder.0.latch-input", true)
	r.steps("10")
	assert.Equal(t, 5.0, r.get("encoder.0.counts-latched"))
	// After an index the latched counts are relative to it.
	r.setp("encoder.0.index-enable", true)
	r.steps("11")
	r.setp("encoder.0.phase-Z", true)
	r.steps("01")
	assert.Equal(t, -2.0, r.get("encoder.0.counts-latched"), "5 - index count 7")
	assert.Equal(t, -1.0, r.get("encoder.0.position-latched"))
}

// The velocity is encoder.c's: from the third count on, the counts
// between the last two captured counts over their timestamps' distance;
// between counts, the lesser of it and scale / (time since the last
// count); 0 once that time reaches 1e9 / (min-speed-estimate * scale).
// position-interpolated adds velocity * (time since the last count).
func TestEncoderVelocity(t *testing.T) {
	t.Parallel()
	r := encRig(t, "setp encoder.0.position-scale 4\nsetp encoder.0.min-speed-estimate 25\n")
	p := 1000000.0 // the thread's period, ns (a variable: C rounds p * 1e-9)
	scale := 1.0 / 4.0
	// A count every second cycle.
	for i, s := range fwd[:2] {
		r.steps(s)
		r.cycles("t", 1)
		assert.Zero(t, r.get("encoder.0.velocity"), "count %d: no estimate before the third", i+1)
	}
	// Count 3 at cycle 4 (timestamp 4p), count 2 at cycle 2.
	r.steps(fwd[2])
	want := (1 * scale) / ((2 * p) * 1e-9)
	assert.Equal(t, want, r.get("encoder.0.velocity"))
	assert.Equal(t, want*60.0, r.get("encoder.0.velocity-rpm"))
	pos := 3 * scale
	assert.Equal(t, pos, r.get("encoder.0.position"))
	assert.Equal(t, pos+want*(1*p*1e-9), r.get("encoder.0.position-interpolated"))
	// Stopped: the estimate scale / dt falls as the time since the last
	// count grows; at 1e9 / (25 * scale) ns = 160 cycles it is 0.
	for k := 2; k < 160; k++ {
		r.cycles("t", 1)
		est := scale / ((float64(k) * p) * 1e-9)
		if est > want {
			est = want
		}
		require.Equal(t, est, r.get("encoder.0.velocity"), "%d periods after the count", k)
		require.Equal(t, pos+float64(est*(float64(k)*p*1e-9)), r.get("encoder.0.position-interpolated"))
	}
	r.cycles("t", 1)
	assert.Zero(t, r.get("encoder.0.velocity"), "160 periods after the count")
	assert.Equal(t, pos, r.get("encoder.0.position-interpolated"))
	// Backwards: the sign follows the counts.
	for _, s := range bwd {
		r.steps(s)
		r.steps(s)
	}
	assert.Equal(t, (-1*scale)/((2*p)*1e-9), r.get("encoder.0.velocity"))
}

// TestEncoderLinuxCNCGolden runs each testdata/encoder/*.script on
// gortapi's encoder and sim_encoder and compares every value shown, bit
// for bit, with what LinuxCNC's encoder.c and sim_encoder.c, compiled
// unchanged, printed for it (testdata/encoder/gen.sh). The scripts run
// all four functions on one thread, in load order.
func TestEncoderLinuxCNCGolden(t *testing.T) {
	t.Parallel()
	scripts, err := filepath.Glob("testdata/encoder/*.script")
	require.NoError(t, err)
	require.NotEmpty(t, scripts)
	for _, s := range scripts {
		t.Run(strings.TrimSuffix(filepath.Base(s), ".script"), func(t *testing.T) {
			t.Parallel()
			runGolden(t, s)
		})
	}
}
