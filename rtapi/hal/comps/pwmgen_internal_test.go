package comps

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const pwmBase = 10 * time.Microsecond

// newPwmBench makes pwmgen with the given output types, runs
// make-pulses once (update takes its period from it) and enables channel
// 0 at 4 kHz: a PWM period of 25 base periods.
func newPwmBench(t *testing.T, types ...int32) (*bench, *pwmgen) {
	t.Helper()
	b := newBench(t, "pwmgen")
	g := newPwmgen(b.c, types)
	b.ready()
	g.makePulses(pwmBase, 0)
	b.set("pwmgen.0.enable", true)
	b.set("pwmgen.0.pwm-freq", 4000.0)
	return b, g
}

// count runs make-pulses n times and counts the cycles each output was
// TRUE.
func count(g *pwmgen, ch int, n int) (out0, out1 int) {
	c := &g.ch[ch]
	for range n {
		g.makePulses(pwmBase, 0)
		if c.out0.Get() {
			out0++
		}
		if c.outputType != 0 && c.out1.Get() {
			out1++
		}
	}
	return out0, out1
}

// The duty cycle over 40 PWM periods (1000 base periods) matches value
// exactly: pure PWM rounds it to whole base periods per PWM period
// (0.25 of 25 is 6, 0.5 is 13), dither keeps the remainder so the
// average is exact, PDM (pwm-freq 0) spreads it over every period.
func TestPwmgenDutyExact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		value  float64
		dither bool
		freq   float64
		highs  int
		currDc float64
	}{
		{"pure 0.25", 0.25, false, 4000, 240, pureDc(6, 25)},
		{"dither 0.25", 0.25, true, 4000, 250, 0.25},
		{"pure 0.5", 0.5, false, 4000, 520, pureDc(13, 25)},
		{"dither 0.5", 0.5, true, 4000, 500, 0.5},
		{"pdm 0.3", 0.3, false, 0, 300, 0.3},
		{"pdm 0.25 dither ignored", 0.25, true, 0, 250, 0.25},
		{"pure 0", 0, false, 4000, 0, 0},
		{"pure 1", 1, false, 4000, 1000, pureDc(25, 25)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, g := newPwmBench(t, 0)
			b.set("pwmgen.0.value", tc.value)
			b.set("pwmgen.0.dither-pwm", tc.dither)
			b.set("pwmgen.0.pwm-freq", tc.freq)
			g.update(time.Millisecond, 0)
			require.Equal(t, tc.currDc, b.float("pwmgen.0.curr-dc"))
			count(g, 0, 100) // settle into the steady pattern
			for w := range 3 {
				highs, _ := count(g, 0, 1000)
				require.Equal(t, tc.highs, highs, "window %d", w)
			}
		})
	}
}

// Pure PWM at 0.25: the output is TRUE for 6 consecutive base periods
// out of every 25, starting 25 periods after update enables it.
func TestPwmgenPureWaveform(t *testing.T) {
	t.Parallel()
	b, g := newPwmBench(t, 0)
	b.set("pwmgen.0.value", 0.25)
	g.update(time.Millisecond, 0)
	for i := range 100 {
		g.makePulses(pwmBase, 0)
		want := i >= 24 && (i-24)%25 < 6
		require.Equal(t, want, b.bit("pwmgen.0.pwm"), "base period %d", i+1)
	}
}

// Negative values: type 0 clamps to 0; type 1 drives dir and the pwm
// pin with |dc|; type 2 puts the pulses on down instead of up.
func TestPwmgenDirection(t *testing.T) {
	t.Parallel()
	b, g := newPwmBench(t, 0, 1, 2)
	for ch := range 3 {
		p := "pwmgen." + string(rune('0'+ch))
		b.set(p+".enable", true)
		b.set(p+".pwm-freq", 4000.0)
		b.set(p+".dither-pwm", true)
		b.set(p+".value", -0.25)
	}
	g.update(time.Millisecond, 0)
	require.Equal(t, 0.0, b.float("pwmgen.0.curr-dc"))
	require.Equal(t, -0.25, b.float("pwmgen.1.curr-dc"))
	require.True(t, b.bit("pwmgen.1.dir"))
	count(g, 0, 100)
	h0, _ := count(g, 0, 1000)
	h1, dir := count(g, 1, 1000)
	up, down := count(g, 2, 1000)
	require.Equal(t, []int{0, 250, 1000, 0, 250}, []int{h0, h1, dir, up, down}) // dir held TRUE
	b.set("pwmgen.2.value", 0.25)
	g.update(time.Millisecond, 0)
	up, down = count(g, 2, 1000)
	require.Equal(t, []int{250, 0}, []int{up, down})
	b.set("pwmgen.1.value", 0.25)
	g.update(time.Millisecond, 0)
	require.False(t, b.bit("pwmgen.1.dir"))
}

// update writes its corrections back: max-dc above 1, min-dc below 0,
// scale 0, pwm-freq rounded to a whole number of base periods (pure) or
// above half the base rate.
func TestPwmgenValidation(t *testing.T) {
	t.Parallel()
	b, g := newPwmBench(t, 1)
	b.set("pwmgen.0.max-dc", 1.5)
	b.set("pwmgen.0.min-dc", -0.1)
	b.set("pwmgen.0.scale", 0.0)
	b.set("pwmgen.0.pwm-freq", 3000.0)
	b.set("pwmgen.0.value", -2.0)
	g.update(time.Millisecond, 0)
	require.Equal(t, 1.0, b.float("pwmgen.0.max-dc"))
	require.Equal(t, 0.0, b.float("pwmgen.0.min-dc"))
	require.Equal(t, 1.0, b.float("pwmgen.0.scale"))
	require.Equal(t, 1.0e9/330000, b.float("pwmgen.0.pwm-freq")) // 33 base periods
	require.Equal(t, pureDc(-33, 33), b.float("pwmgen.0.curr-dc"))
	b.set("pwmgen.0.pwm-freq", 1e6)
	g.update(time.Millisecond, 0)
	require.Equal(t, 50000.0, b.float("pwmgen.0.pwm-freq"))
	b.set("pwmgen.0.dither-pwm", true)
	b.set("pwmgen.0.pwm-freq", 0.1)
	g.update(time.Millisecond, 0)
	require.Equal(t, 0.5, b.float("pwmgen.0.pwm-freq"))
	require.Equal(t, int64(2000000000), g.ch[0].period.Load())
	b.set("pwmgen.0.pwm-freq", -5.0)
	g.update(time.Millisecond, 0)
	require.Equal(t, 0.0, b.float("pwmgen.0.pwm-freq"))
	require.Equal(t, int64(pwmBase), g.ch[0].period.Load())
	b.set("pwmgen.0.min-dc", 0.5)
	b.set("pwmgen.0.max-dc", 0.4)
	b.set("pwmgen.0.value", 0.1)
	g.update(time.Millisecond, 0)
	require.Equal(t, []float64{0.4, 0.4, 0.4}, []float64{b.float("pwmgen.0.min-dc"), b.float("pwmgen.0.max-dc"), b.float("pwmgen.0.curr-dc")})
	b.set("pwmgen.0.enable", false)
	g.update(time.Millisecond, 0)
	count(g, 0, 10)
	require.False(t, b.bit("pwmgen.0.pwm"))
}

// pureDc is curr-dc in pure PWM: high periods times the reciprocal of
// the periods, at run time as pwmgen.c computes it.
func pureDc(high, periods int) float64 {
	recip := 1.0 / float64(periods)
	return float64(high) * recip
}
