package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
	"github.com/gortapi/gortapi/rtapi/sim"
)

// runStepperSim loads testdata/stepper.hal on the sim flavor and returns
// every pin's and parameter's value after each of n servo cycles, one
// string a cycle.
func runStepperSim(t *testing.T, n int) []string {
	t.Helper()
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 41}})
	require.NoError(t, err)
	defer rt.Close()
	h, err := hal.New(rt, hal.Options{})
	require.NoError(t, err)
	defer h.Close()
	f, err := os.Open("testdata/stepper.hal")
	require.NoError(t, err)
	defer f.Close()
	cmds, err := halfile.Parse("testdata/stepper.hal", f)
	require.NoError(t, err)
	require.NoError(t, h.Load(io.Discard, cmds))
	require.True(t, h.Running(), "the file ends with start")
	servo, ok := h.Thread("servo-thread")
	require.True(t, ok)
	clock, err := sim.New(rt)
	require.NoError(t, err)
	d := h.View()
	out := make([]string, 0, n)
	var b strings.Builder
	for range n {
		require.NoError(t, clock.RunCycles(servo.Task(), 1))
		s, err := d.Read()
		require.NoError(t, err)
		b.Reset()
		for _, p := range s.Pins {
			b.WriteString(p.Name)
			b.WriteByte('=')
			b.WriteString(strconv.FormatUint(p.Value, 16))
			b.WriteByte(' ')
		}
		for _, p := range s.Params {
			b.WriteString(p.Name)
			b.WriteByte('=')
			b.WriteString(strconv.FormatUint(p.Value, 16))
			b.WriteByte(' ')
		}
		out = append(out, b.String())
	}
	base, ok := h.Thread("base-thread")
	require.True(t, ok)
	assert.Equal(t, int64((n-1)*40+1), base.Stats().Beat, "40 base cycles a servo cycle, the first at 0")
	require.NoError(t, h.Stop())
	return out
}

// pinValue returns pin name's value in a runStepperSim line.
func pinValue(t *testing.T, line, name string) uint64 {
	t.Helper()
	_, rest, ok := strings.Cut(line, " "+name+"=")
	if !ok && strings.HasPrefix(line, name+"=") {
		rest, ok = strings.TrimPrefix(line, name+"="), true
	}
	require.True(t, ok, "no pin %s", name)
	v, _, _ := strings.Cut(rest, " ")
	u, err := strconv.ParseUint(v, 16, 64)
	require.NoError(t, err)
	return u
}

func s32(u uint64) int64 { return int64(int32(uint32(u))) }

// testdata/stepper.hal on virtual time, twice: every pin and parameter of every servo
// cycle is the same bit for bit, and the encoders count the steps.
func TestStepperOnSimIsReproducible(t *testing.T) {
	const n = 2500 // 2.5 s: more than a period of the 0.5 Hz sine
	a := runStepperSim(t, n)
	b := runStepperSim(t, n)
	require.Len(t, b, n)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("servo cycle %d differs:\n%s\n%s", i, a[i], b[i])
		}
	}
	last := a[n-1]
	for _, axis := range []string{"0", "1", "2"} {
		assert.NotZero(t, pinValue(t, last, "stepgen."+axis+".counts"), "axis %s stepped", axis)
	}
	// Z's quadrature encoder follows its stepgen within one count (the
	// first edge, phase-A set before any step, is counted) every cycle.
	for i, line := range a {
		step, enc := s32(pinValue(t, line, "stepgen.2.counts")), s32(pinValue(t, line, "encoder.2.counts"))
		require.InDelta(t, float64(step)+1, float64(enc), 1, "cycle %d", i)
	}
	// X's counter-mode encoder counts every step, forward or back.
	assert.Greater(t, s32(pinValue(t, last, "encoder.0.counts")), s32(pinValue(t, last, "stepgen.0.counts")))
}

// halrun runs testdata/stepper.hal on the posix flavor, its threads
// real: both threads beat, and the stepgens' counts and the encoders'
// move together. Events only: what a loaded machine does to its timing
// is not asserted.
func TestStepperOnPosix(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(rttest.Program(t, "."), append(append([]string{}, rtFlags...), "-shm-dir", dir,
		"-I", "-f", "testdata/stepper.hal")...)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = cmd.Stdout
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	next := func() string {
		l, ok := <-lines
		require.True(t, ok, "halrun ended")
		return l
	}
	for l := next(); !strings.Contains(l, "its end or quit ends"); l = next() {
		require.NotContains(t, l, "halrun: testdata", "the file loads")
	}

	// ask asks for both threads' beats and four counts, and reads them.
	type sample struct{ base, servo, xStep, xEnc, zStep, zEnc int64 }
	ask := func() sample {
		_, err := io.WriteString(stdin, "getp base-thread.threadbeat\ngetp servo-thread.threadbeat\n"+
			"getp stepgen.0.counts\ngetp encoder.0.counts\ngetp stepgen.2.counts\ngetp encoder.2.counts\n")
		require.NoError(t, err)
		var s sample
		for _, p := range []*int64{&s.base, &s.servo, &s.xStep, &s.xEnc, &s.zStep, &s.zEnc} {
			l := next()
			v, err := strconv.ParseInt(l, 10, 64)
			require.NoError(t, err, l)
			*p = v
		}
		return s
	}
	first := ask()
	rttest.WaitFor(t, "both threads beat and the axes step and are counted", func() bool {
		s := ask()
		return s.base > first.base && s.servo > first.servo &&
			s.xStep != 0 && s.xEnc != 0 && s.zStep != 0 && s.zEnc != 0 && s.zEnc != first.zEnc
	})
	_, err = io.WriteString(stdin, "quit\n")
	require.NoError(t, err)
	go func() {
		for range lines {
		}
	}()
	require.NoError(t, cmd.Wait())
	assert.Empty(t, entries(t, dir))
}
