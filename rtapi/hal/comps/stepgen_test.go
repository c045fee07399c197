package comps

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
	"github.com/gortapi/gortapi/rtapi/sim"
)

// sgRig is a stepgen on a sim-flavor HAL with a base thread (and
// usually a servo thread), and probes that run last in each thread.
type sgRig struct {
	t       *testing.T
	rt      *rtapi.RT
	h       *hal.HAL
	clock   *sim.Controller
	s       *stepgenComp
	threads []*hal.Thread
	start   int64 // virtual time of the first cycle
	base    int64 // base cycles run so far
	probes  [2]func(k int64)
}

func newSGRig(t *testing.T) *sgRig {
	t.Helper()
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 1}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() })
	h, err := hal.New(rt, hal.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	return &sgRig{t: t, rt: rt, h: h}
}

// load makes stepgen from a loadrt line's arguments, as LoadRT would,
// keeping the component's state for the test.
func (r *sgRig) load(args ...string) {
	r.t.Helper()
	var vals [3]string
	var given [3]bool
	for _, a := range args {
		k, v, _ := strings.Cut(a, "=")
		i := slices.Index([]string{"step_type", "ctrl_type", "user_step_type"}, k)
		require.GreaterOrEqual(r.t, i, 0, a)
		vals[i], given[i] = v, true
	}
	cfg, err := parseStepgenArgs(vals, given)
	require.NoError(r.t, err)
	c, err := r.h.NewComponent("stepgen")
	require.NoError(r.t, err)
	r.s = newStepgen(c, cfg)
	require.NoError(r.t, c.Ready())
}

func (r *sgRig) thread(name string, period time.Duration) {
	r.t.Helper()
	th, err := r.h.NewThread(name, period)
	require.NoError(r.t, err)
	r.threads = append(r.threads, th)
}

func (r *sgRig) addf(funct, thread string) {
	r.t.Helper()
	require.NoError(r.t, r.h.AddFunct(funct, thread, hal.Last))
}

// probe runs fn(k) last in thread i (0: base) at every cycle, k the
// base cycle of the same instant (counted from 0).
func (r *sgRig) probe(i int, fn func(k int64)) { r.probes[i] = fn }

func (r *sgRig) setp(name string, v any) {
	r.t.Helper()
	s := fmt.Sprint(v)
	if b, ok := v.(bool); ok {
		s = "0"
		if b {
			s = "1"
		}
	}
	require.NoError(r.t, r.h.SetP(name, s))
}

// run runs n base cycles, and the servo cycles of their instants (after
// the base cycle of the same instant).
func (r *sgRig) run(n int64) {
	r.t.Helper()
	if !r.h.Running() {
		var k int64 = -1
		for i, th := range r.threads {
			name := fmt.Sprintf("probe.%d", i)
			fn := r.probes[i]
			_, err := r.h.Export(name, func(time.Duration, int64) {
				if i == 0 {
					k++
				}
				if fn != nil {
					fn(k)
				}
			})
			require.NoError(r.t, err)
			r.addf(name, th.Name())
		}
		var err error
		r.clock, err = sim.New(r.rt)
		require.NoError(r.t, err)
		r.start = r.rt.Now()
		require.NoError(r.t, r.h.Start())
	}
	r.base += n
	require.NoError(r.t, r.clock.AdvanceTo(r.start+r.base*int64(r.threads[0].Period())-1))
	require.Equal(r.t, r.base, r.threads[0].Stats().Beat, "base cycles run")
}

// item returns a reader of the named stepgen pin or parameter, printed
// as harness.c prints it: bits and integers in decimal, floats as their
// IEEE bits in hex.
func (r *sgRig) item(name string) func() string {
	r.t.Helper()
	var n int
	var field string
	_, err := fmt.Sscanf(name, "stepgen.%d.%s", &n, &field)
	require.NoError(r.t, err, name)
	require.Less(r.t, n, len(r.s.ch), name)
	c := &r.s.ch[n]
	f := func(h hal.Float) func() string {
		return func() string { return fmt.Sprintf("%016x", math.Float64bits(h.Get())) }
	}
	u := func(h hal.U32) func() string { return func() string { return strconv.FormatUint(uint64(h.Get()), 10) } }
	s := func(h hal.S32) func() string { return func() string { return strconv.Itoa(int(h.Get())) } }
	b := func(h hal.Bit) func() string {
		return func() string {
			if h.Get() {
				return "1"
			}
			return "0"
		}
	}
	switch field {
	case "step", "up":
		return b(c.phase[0])
	case "dir", "down":
		return b(c.phase[1])
	case "phase-A", "phase-B", "phase-C", "phase-D", "phase-E":
		return b(c.phase[field[6]-'A'])
	case "rawcounts":
		return s(c.rawcount)
	case "counts":
		return s(c.count)
	case "frequency":
		return f(c.freq)
	case "position-fb":
		return f(c.posFb)
	case "position-scale":
		return f(c.posScale)
	case "maxvel":
		return f(c.maxvel)
	case "maxaccel":
		return f(c.maxaccel)
	case "steplen":
		return u(c.stepLen)
	case "stepspace":
		return u(c.stepSpace)
	case "dirsetup":
		return u(c.dirSetup)
	case "dirhold", "dirdelay":
		return u(c.dirHoldDly)
	}
	r.t.Fatalf("no item %s", name)
	return nil
}

// runScript runs a harness.c script on gortapi's stepgen and returns
// what harness.c prints for it.
func runScript(t *testing.T, path string) string {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r := newSGRig(t)
	var out strings.Builder
	var traces [2][]func() string
	var last [2]string
	threadIndex := func(name string) int {
		for i, th := range r.threads {
			if th.Name() == name {
				return i
			}
		}
		t.Fatalf("no thread %s", name)
		return 0
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<16)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		w := strings.Fields(line)
		if len(w) == 0 {
			continue
		}
		switch w[0] {
		case "loadrt":
			r.load(w[2:]...)
		case "thread":
			ns, err := strconv.ParseInt(w[2], 0, 64)
			require.NoError(t, err)
			r.thread(w[1], time.Duration(ns))
		case "addf":
			r.addf(w[1], w[2])
		case "trace":
			i := threadIndex(w[1])
			for _, n := range w[2:] {
				traces[i] = append(traces[i], r.item(n))
			}
			tag := "bs"[i]
			r.probe(i, func(k int64) {
				var b strings.Builder
				for _, g := range traces[i] {
					b.WriteString(" " + g())
				}
				if tag == 's' || b.String() != last[i] {
					fmt.Fprintf(&out, "%c %d%s\n", tag, k, b.String())
				}
				last[i] = b.String()
			})
		case "setp":
			r.setp(w[1], w[2])
		case "run":
			n, err := strconv.ParseInt(w[1], 0, 64)
			require.NoError(t, err)
			r.run(n)
		case "show":
			for _, n := range w[1:] {
				fmt.Fprintf(&out, "%s %s\n", n, r.item(n)())
			}
		default:
			t.Fatalf("%s: unknown line %q", path, line)
		}
	}
	require.NoError(t, sc.Err())
	return out.String()
}

// Every script under testdata/stepgen runs on gortapi's stepgen, in
// base and servo threads on virtual time, and prints what LinuxCNC's
// stepgen.c printed for it under harness.c (the .golden files; see
// testdata/stepgen/README.md): every output bit and count of every base
// cycle and every frequency, count and position of every servo cycle,
// bit for bit.
func TestStepgenGolden(t *testing.T) {
	scripts, err := filepath.Glob("testdata/stepgen/*.script")
	require.NoError(t, err)
	require.NotEmpty(t, scripts)
	for _, s := range scripts {
		t.Run(strings.TrimSuffix(filepath.Base(s), ".script"), func(t *testing.T) {
			want, err := os.ReadFile(strings.TrimSuffix(s, ".script") + ".golden")
			require.NoError(t, err)
			got := runScript(t, s)
			gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
			for i := range min(len(gl), len(wl)) {
				if gl[i] != wl[i] {
					t.Fatalf("line %d:\n got %s\nwant %s", i+1, gl[i], wl[i])
				}
			}
			require.Equal(t, len(wl), len(gl), "lines")
		})
	}
}

// LinuxCNC's own regression test tests/stepgen.0 (its test.hal is
// linuxcnc-test0.script): the dir and step pins of 3500 cycles of a
// 100 µs thread, as LinuxCNC's halsampler printed them
// (linuxcnc-test0.expected, copied from LinuxCNC), and 1280 steps.
func TestStepgenLinuxCNCTest0(t *testing.T) {
	got := runScript(t, "testdata/stepgen/linuxcnc-test0.script")
	want, err := os.ReadFile("testdata/stepgen/linuxcnc-test0.expected")
	require.NoError(t, err)
	var lines []string
	cur := ""
	k := 0
	steps := 0
	for _, l := range strings.Split(strings.TrimSpace(got), "\n") {
		var at int
		var dir, step string
		_, err := fmt.Sscanf(l, "b %d %s %s", &at, &dir, &step)
		require.NoError(t, err, l)
		for ; k < at; k++ {
			lines = append(lines, cur)
		}
		cur = dir + " " + step + " "
		if step == "1" {
			steps++
		}
	}
	for ; k < 3500; k++ {
		lines = append(lines, cur)
	}
	assert.Equal(t, strings.Split(strings.TrimSuffix(string(want), "\n"), "\n"), lines)
	assert.Equal(t, 1280, steps)
}

// sgTrace is what a test decoder sees of one channel at every base cycle.
type sgTrace struct {
	a, b     []bool // step and dir, up and down, or phase-A and B
	rawcount []int32
}

// decodeStepDir counts rising step edges, down when dir is high.
func decodeStepDir(tr *sgTrace) []int32 {
	out := make([]int32, len(tr.a))
	n, prev := int32(0), false
	for i := range tr.a {
		if tr.a[i] && !prev {
			if tr.b[i] {
				n--
			} else {
				n++
			}
		}
		prev = tr.a[i]
		out[i] = n
	}
	return out
}

// record traces channel ch's first two outputs and rawcounts at every
// base cycle.
func (r *sgRig) record(ch int, tr *sgTrace) {
	c := &r.s.ch[ch]
	prev := r.probes[0]
	r.probe(0, func(k int64) {
		if prev != nil {
			prev(k)
		}
		tr.a = append(tr.a, c.phase[0].Get())
		tr.b = append(tr.b, c.phase[1].Get())
		tr.rawcount = append(tr.rawcount, c.rawcount.Get())
	})
}

// A step/dir channel in position mode, followed by a decoder of its pins:
// the decoder tracks rawcounts at every base cycle and counts at every
// servo cycle exactly; position-fb is within half a step of counts /
// scale; the frequency never exceeds maxvel and never changes by more
// than maxaccel × the servo period; the moves end on their commands.
func TestStepgenStepDirDecoderTracksCounts(t *testing.T) {
	t.Parallel()
	const scale, maxvel, maxaccel = 200.0, 25.0, 300.0
	r := newSGRig(t)
	r.load("step_type=0")
	r.thread("base", 25*time.Microsecond)
	r.thread("servo", time.Millisecond)
	r.addf("stepgen.make-pulses", "base")
	r.addf("stepgen.capture-position", "servo")
	r.addf("stepgen.update-freq", "servo")
	var tr sgTrace
	r.record(0, &tr)
	c := &r.s.ch[0]
	type servoSample struct {
		k        int64
		counts   int32
		fb, freq float64
	}
	var servo []servoSample
	r.probe(1, func(k int64) {
		servo = append(servo, servoSample{k, c.count.Get(), c.posFb.Get(), c.freq.Get()})
	})
	r.setp("stepgen.0.position-scale", scale)
	r.setp("stepgen.0.maxvel", maxvel)
	r.setp("stepgen.0.maxaccel", maxaccel)
	r.setp("stepgen.0.enable", true)
	for _, cmd := range []float64{3, -1, 0.25, 0.25} {
		r.setp("stepgen.0.position-cmd", cmd)
		r.run(40 * 600) // 600 ms
		assert.Equal(t, int32(math.Round(cmd*scale)), c.count.Get(), "counts after the move to %v", cmd)
	}
	dec := decodeStepDir(&tr)
	for i := range dec {
		if dec[i] != tr.rawcount[i] {
			t.Fatalf("base cycle %d: decoded %d, rawcounts %d", i, dec[i], tr.rawcount[i])
		}
	}
	maxStep := maxaccel * scale * 0.001
	prevFreq, hi, lo := 0.0, 0.0, 0.0
	for _, s := range servo {
		hi, lo = max(hi, s.freq), min(lo, s.freq)
		require.Equal(t, dec[s.k], s.counts, "servo cycle at base cycle %d", s.k)
		assert.LessOrEqual(t, math.Abs(s.fb*scale-float64(s.counts)), 0.5, "position-fb at base cycle %d", s.k)
		assert.LessOrEqual(t, math.Abs(s.freq), maxvel*scale*(1+1e-12), "frequency at base cycle %d", s.k)
		assert.LessOrEqual(t, math.Abs(s.freq-prevFreq), maxStep*(1+1e-9), "frequency change at base cycle %d", s.k)
		prevFreq = s.freq
	}
	// the moves reach maxvel both ways
	assert.Equal(t, maxvel*scale, hi, "highest frequency")
	assert.Equal(t, -maxvel*scale, lo, "lowest frequency")
}

// loadrt stepgen makes stepgen.c's pins and parameters, with its types,
// directions and defaults, for each step type and mode, and its three
// functions.
func TestStepgenLoadRTPinsAndParams(t *testing.T) {
	t.Parallel()
	r := newSGRig(t)
	require.NoError(t, r.h.LoadRT("stepgen", "step_type=0,1,2,11,15", "ctrl_type=p,v,P,V", "user_step_type=1,2,4"))
	snap, err := r.h.View().Read()
	require.NoError(t, err)
	items := map[string]string{}
	for _, p := range snap.Pins {
		items[p.Name] = fmt.Sprintf("pin %s %s %s", p.Type, p.Dir, hal.FormatValue(p.Type, p.Value))
	}
	for _, p := range snap.Params {
		items[p.Name] = fmt.Sprintf("param %s %s %s", p.Type, p.Dir, hal.FormatValue(p.Type, p.Value))
	}
	common := func(n int, cmd string) map[string]string {
		p := fmt.Sprintf("stepgen.%d.", n)
		return map[string]string{
			p + "rawcounts":      "param s32 RO 0",
			p + "counts":         "pin s32 OUT 0",
			p + "position-scale": "param float RW 1",
			p + cmd:              "pin float IN 0",
			p + "enable":         "pin bit IN FALSE",
			p + "position-fb":    "pin float OUT 0",
			p + "frequency":      "param float RO 0",
			p + "maxvel":         "param float RW 0",
			p + "maxaccel":       "param float RW 0",
			p + "steplen":        "param u32 RW 1",
		}
	}
	want := map[string]string{}
	add := func(m map[string]string) {
		for k, v := range m {
			want[k] = v
		}
	}
	add(common(0, "position-cmd"))
	add(map[string]string{"stepgen.0.stepspace": "param u32 RW 1", "stepgen.0.dirsetup": "param u32 RW 1",
		"stepgen.0.dirhold": "param u32 RW 1", "stepgen.0.step": "pin bit OUT FALSE", "stepgen.0.dir": "pin bit OUT FALSE"})
	add(common(1, "velocity-cmd"))
	add(map[string]string{"stepgen.1.stepspace": "param u32 RW 1", "stepgen.1.dirdelay": "param u32 RW 1",
		"stepgen.1.up": "pin bit OUT FALSE", "stepgen.1.down": "pin bit OUT FALSE"})
	add(common(2, "position-cmd"))
	add(map[string]string{"stepgen.2.dirdelay": "param u32 RW 1",
		"stepgen.2.phase-A": "pin bit OUT FALSE", "stepgen.2.phase-B": "pin bit OUT FALSE"})
	add(common(3, "velocity-cmd"))
	want["stepgen.3.dirdelay"] = "param u32 RW 1"
	for _, ph := range "ABCDE" {
		want["stepgen.3.phase-"+string(ph)] = "pin bit OUT FALSE"
	}
	add(common(4, "position-cmd")) // ctrl_type has 4 entries: the 5th is p
	want["stepgen.4.dirdelay"] = "param u32 RW 1"
	for _, ph := range "ABC" { // user_step_type 1,2,4: three phases
		want["stepgen.4.phase-"+string(ph)] = "pin bit OUT FALSE"
	}
	for k := range items {
		if !strings.HasPrefix(k, "stepgen.") {
			delete(items, k)
		}
	}
	// FormatValue's spelling of values may differ; compare the parts
	for k, v := range want {
		require.Contains(t, items, k)
		g, w := strings.Fields(items[k]), strings.Fields(v)
		assert.Equal(t, w[:3], g[:3], k)
		switch w[3] {
		case "FALSE":
			assert.Contains(t, []string{"FALSE", "0", "false"}, g[3], k)
		default:
			gv, err1 := strconv.ParseFloat(g[3], 64)
			wv, err2 := strconv.ParseFloat(w[3], 64)
			require.NoError(t, err1, k)
			require.NoError(t, err2, k)
			assert.Equal(t, wv, gv, k)
		}
	}
	var extra []string
	for k := range items {
		// FUNCT.time, .tmax and .tmax-increased are hal_export_funct's.
		timing := strings.HasPrefix(k, "stepgen.make-pulses.") || strings.HasPrefix(k, "stepgen.update-freq.") ||
			strings.HasPrefix(k, "stepgen.capture-position.")
		if _, ok := want[k]; !ok && !timing {
			extra = append(extra, k)
		}
	}
	assert.Empty(t, extra, "items stepgen.c does not make")
	for _, f := range []string{"stepgen.make-pulses", "stepgen.update-freq", "stepgen.capture-position"} {
		_, ok := r.h.Funct(f)
		assert.True(t, ok, f)
	}
}

// Bad loadrt stepgen lines are refused with rtapi_app_main's and
// rtapi_app's refusals, naming the argument; the edge cases rtapi_app
// accepts are accepted the same way.
func TestStepgenLoadArgs(t *testing.T) {
	t.Parallel()
	refused := []struct{ args, msg string }{
		{"", "no channels configured"},
		{"step_type=-1", "no channels configured"},
		{"step_type=16", "bad stepping type '16', axis 0"},
		{"step_type=0,-2", "bad stepping type '-2', axis 1"},
		{"step_type=0,x", "`x' invalid for parameter `step_type'"},
		{"step_type=08", "`08' invalid for parameter `step_type'"},
		{"step_type=-", "`-' invalid for parameter `step_type'"},
		{"step_type=0 ctrl_type=q", "bad control type 'q' for axis 0"},
		{"step_type=0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0", "step_type=0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0: can only take 16 arguments"},
		{"step_type=15 user_step_type=1,32", "bad user step type uses more than 5 phases"},
		{"step_type=15 user_step_type=1,-2", "bad user step type uses more than 5 phases"},
		{"step_type=0 count=2", "unknown argument \"count\""},
		{"step_type=0 names=x", "unknown argument \"names\""},
	}
	for _, c := range refused {
		r := newSGRig(t)
		err := r.h.LoadRT("stepgen", strings.Fields(c.args)...)
		require.Error(t, err, c.args)
		assert.ErrorIs(t, err, rtapi.ErrInvalid, c.args)
		assert.Contains(t, err.Error(), c.msg, c.args)
	}
	accepted := []struct {
		args  string
		chans int
	}{
		{"step_type=", 1},                             // strtol(""): 0
		{"step_type=0,-1,2", 1},                       // -1 ends the list
		{"step_type=0x2,010,1", 3},                    // hex and octal
		{"step_type=4294967298", 1},                   // int truncation: 2
		{"step_type=0,0 ctrl_type=pos,velocity,x", 2}, // first letter; extra entries unchecked
		{"step_type=15", 1},                           // no user_step_type: no phase pins
	}
	for _, c := range accepted {
		vals := [3]string{}
		given := [3]bool{}
		for _, a := range strings.Fields(c.args) {
			k, v, _ := strings.Cut(a, "=")
			i := slices.Index([]string{"step_type", "ctrl_type", "user_step_type"}, k)
			vals[i], given[i] = v, true
		}
		cfg, err := parseStepgenArgs(vals, given)
		require.NoError(t, err, c.args)
		assert.Len(t, cfg.stepType, c.chans, c.args)
		r := newSGRig(t)
		require.NoError(t, r.h.LoadRT("stepgen", strings.Fields(c.args)...), c.args)
	}
	cfg, err := parseStepgenArgs([3]string{"0x2,010,1"}, [3]bool{true})
	require.NoError(t, err)
	assert.Equal(t, []int{2, 8, 1}, cfg.stepType)
	cfg, err = parseStepgenArgs([3]string{"4294967298"}, [3]bool{true})
	require.NoError(t, err)
	assert.Equal(t, []int{2}, cfg.stepType)
}

// strtolBase0 is C's strtol(s, &end, 0) with *end required to be the end.
func TestStrtolBase0(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in string
		n  int64
		ok bool
	}{
		{"", 0, true}, {"0", 0, true}, {"12", 12, true}, {"-3", -3, true}, {"+7", 7, true},
		{" 5", 5, true}, {"0x1F", 31, true}, {"0X1f", 31, true}, {"017", 15, true},
		{"0x", 0, false}, {"08", 0, false}, {"1 ", 0, false}, {" ", 0, false}, {"-", 0, false},
		{"1_0", 0, false}, {"0b1", 0, false}, {"9223372036854775808", math.MaxInt64, true},
		{"-9223372036854775809", math.MinInt64, true}, {"-9223372036854775808", math.MinInt64, true},
	} {
		n, ok := strtolBase0(c.in)
		assert.Equal(t, c.ok, ok, "%q", c.in)
		if ok {
			assert.Equal(t, c.n, n, "%q", c.in)
		}
	}
}

// sgAxis is a one-channel stepgen with base and servo threads, its pins
// traced at every base cycle and its frequency at every servo cycle.
func sgAxis(t *testing.T, stepType, ctrl string, base time.Duration) (*sgRig, *sgTrace, *[]float64) {
	r := newSGRig(t)
	r.load("step_type="+stepType, "ctrl_type="+ctrl)
	r.thread("base", base)
	r.thread("servo", time.Millisecond)
	r.addf("stepgen.make-pulses", "base")
	r.addf("stepgen.capture-position", "servo")
	r.addf("stepgen.update-freq", "servo")
	tr := &sgTrace{}
	r.record(0, tr)
	freqs := &[]float64{}
	c := &r.s.ch[0]
	r.probe(1, func(int64) { *freqs = append(*freqs, c.freq.Get()) })
	return r, tr, freqs
}

// runs returns the lengths of the runs of v in s, whole runs only
// (not the first or last of s).
func runs(s []bool, v bool) []int {
	var out []int
	start := -1
	for i := 1; i < len(s); i++ {
		switch {
		case s[i] == v && s[i-1] != v:
			start = i
		case s[i] != v && s[i-1] == v && start >= 0:
			out = append(out, i-start)
		}
	}
	return out
}

// Step pulses respect steplen and stepspace, and direction changes
// dirhold and dirsetup, counted in base cycles of 25 µs: each parameter
// is rounded up to whole base periods (30 µs: 2 periods, 20 µs: 1,
// 40 µs: 2, 60 µs: 3).
func TestStepgenStepTiming(t *testing.T) {
	t.Parallel()
	r, tr, _ := sgAxis(t, "0", "p", 25*time.Microsecond)
	r.setp("stepgen.0.position-scale", 1000.0)
	r.setp("stepgen.0.steplen", 30000)
	r.setp("stepgen.0.stepspace", 20000)
	r.setp("stepgen.0.dirhold", 40000)
	r.setp("stepgen.0.dirsetup", 60000)
	r.setp("stepgen.0.enable", true)
	// fast moves back and forth: at the maximum rate, with reversals
	for _, cmd := range []float64{0.2, -0.1, 0.05, 0.051, 0.0} {
		r.setp("stepgen.0.position-cmd", cmd)
		r.run(40 * 150)
	}
	c := &r.s.ch[0]
	assert.Equal(t, []uint32{50000, 25000, 50000, 75000},
		[]uint32{c.stepLen.Get(), c.stepSpace.Get(), c.dirHoldDly.Get(), c.dirSetup.Get()}, "rounded up to base periods")
	high, low := runs(tr.a, true), runs(tr.a, false)
	require.NotEmpty(t, high)
	for _, n := range high {
		require.Equal(t, 2, n, "step high for steplen")
	}
	assert.GreaterOrEqual(t, slices.Min(low), 1, "step low for stepspace")
	assert.Equal(t, 1, slices.Min(low), "the maximum rate is reached")
	// around each dir change: the last falling step edge before it and
	// the first rising edge after it
	changes := 0
	for i := 1; i < len(tr.b); i++ {
		if tr.b[i] == tr.b[i-1] {
			continue
		}
		changes++
		require.False(t, tr.a[i], "no step while dir changes (cycle %d)", i)
		fall := i - 1
		for fall > 0 && !tr.a[fall] {
			fall--
		}
		if tr.a[fall] { // a step came before: dirhold from its falling edge
			assert.GreaterOrEqual(t, i-(fall+1), 2, "dirhold before cycle %d", i)
		}
		rise := i
		for rise < len(tr.a) && !tr.a[rise] {
			rise++
		}
		if rise < len(tr.a) {
			assert.GreaterOrEqual(t, rise-i, 3, "dirsetup after cycle %d", i)
		}
	}
	assert.GreaterOrEqual(t, changes, 3, "direction changes")
}

// The maximum step rate at a 25 µs base period is stepgen.c's formula,
// 1 / (steplen + stepspace), both rounded up to whole base periods: with
// the defaults (1 ns each: one period each) 20 kHz, a step every second
// base cycle; a maxvel above it is written back as max_freq / scale.
func TestStepgenMaxStepRate(t *testing.T) {
	t.Parallel()
	const base = 25000 // ns
	for _, c := range []struct {
		steplen, stepspace uint32
		periods            int // base cycles per step at the limit
	}{
		{1, 1, 2},
		{30000, 20000, 3},
		{25000, 0, 1},
	} {
		r, tr, freqs := sgAxis(t, "0", "v", base*time.Nanosecond)
		r.setp("stepgen.0.position-scale", 10.0)
		r.setp("stepgen.0.maxvel", 1e6)
		r.setp("stepgen.0.steplen", c.steplen)
		r.setp("stepgen.0.stepspace", c.stepspace)
		r.setp("stepgen.0.velocity-cmd", 1e6)
		r.setp("stepgen.0.enable", true)
		r.run(40 * 20)
		ceil := func(v uint32) int64 { return (int64(v) + base - 1) / base * base }
		minStepPeriod := ceil(max(c.steplen, 1)) + ceil(c.stepspace)
		maxFreq := 1.0 / (float64(minStepPeriod) * 0.000000001)
		ch := &r.s.ch[0]
		assert.Equal(t, maxFreq/10.0, ch.maxvel.Get(), "maxvel limited, %+v", c)
		assert.Equal(t, maxFreq, (*freqs)[len(*freqs)-1], "frequency, %+v", c)
		// the last 10 servo periods: steps at least `periods` base
		// cycles apart, at the rate of the add value (2^28 × f × period,
		// truncated: 1/3 of a step per cycle is a little under)
		var rises []int
		for i := len(tr.a) - 400; i < len(tr.a); i++ {
			if tr.rawcount[i] != tr.rawcount[i-1] {
				rises = append(rises, i)
			}
		}
		gaps := []int{}
		for i := 1; i < len(rises); i++ {
			gaps = append(gaps, rises[i]-rises[i-1])
		}
		assert.Equal(t, c.periods, slices.Min(gaps), "closest steps, %+v", c)
		assert.InDelta(t, 400/float64(c.periods), len(rises), 1, "steps in 400 base cycles, %+v", c)
		if c.periods == 1 {
			assert.Equal(t, 400, len(rises), "a step every base cycle, %+v", c)
		}
	}
}

// Up/down counts right (a pulse on up per forward step, on down per
// reverse step, never both); quadrature (type 2) decodes to counts, A
// leading B forward, as LinuxCNC's tests/stepgen.1 checks; velocity mode
// reaches the commanded frequency at maxaccel.
func TestStepgenUpDownQuadratureVelocity(t *testing.T) {
	t.Parallel()
	t.Run("up/down", func(t *testing.T) {
		r, tr, freqs := sgAxis(t, "1", "v", 25*time.Microsecond)
		r.setp("stepgen.0.position-scale", 100.0)
		r.setp("stepgen.0.maxaccel", 500.0)
		r.setp("stepgen.0.enable", true)
		r.setp("stepgen.0.velocity-cmd", 30.0)
		r.run(40 * 200)
		assert.Equal(t, 3000.0, (*freqs)[len(*freqs)-1], "frequency reached")
		for i, f := range *freqs {
			if i > 0 {
				assert.LessOrEqual(t, f-(*freqs)[i-1], 500.0*100*0.001*(1+1e-9))
			}
		}
		r.setp("stepgen.0.velocity-cmd", -20.0)
		r.run(40 * 200)
		assert.Equal(t, -2000.0, (*freqs)[len(*freqs)-1], "frequency reached")
		n := int32(0)
		for i := 1; i < len(tr.a); i++ {
			require.False(t, tr.a[i] && tr.b[i], "up and down at once, cycle %d", i)
			if tr.a[i] && !tr.a[i-1] {
				n++
			}
			if tr.b[i] && !tr.b[i-1] {
				n--
			}
			require.Equal(t, tr.rawcount[i], n, "cycle %d", i)
		}
		assert.Equal(t, tr.rawcount[len(tr.rawcount)-40], r.s.ch[0].count.Get(), "counts captured at the last servo cycle")
	})
	t.Run("quadrature", func(t *testing.T) {
		r, tr, _ := sgAxis(t, "2", "p", 25*time.Microsecond)
		r.setp("stepgen.0.position-scale", 32000.0)
		r.setp("stepgen.0.maxvel", 0.15)
		r.setp("stepgen.0.maxaccel", 2.0)
		r.setp("stepgen.0.enable", true)
		r.setp("stepgen.0.position-cmd", 0.04)
		r.run(40 * 400)
		r.setp("stepgen.0.position-cmd", -0.01)
		r.run(40 * 600)
		// tests/stepgen.1's checkresult: A leading B counts up
		n := int32(0)
		for i := 1; i < len(tr.a); i++ {
			oa, a, ob, b := tr.a[i-1], tr.a[i], tr.b[i-1], tr.b[i]
			switch {
			case oa != a && ob != b:
				t.Fatalf("A and B change at once, cycle %d", i)
			case oa != a:
				if a != b {
					n++
				} else {
					n--
				}
			case ob != b:
				if a == b {
					n++
				} else {
					n--
				}
			}
			require.Equal(t, tr.rawcount[i], n, "cycle %d", i)
		}
		assert.Equal(t, int32(-320), n, "the move ends on -0.01 × 32000")
		assert.Equal(t, n, r.s.ch[0].count.Get())
	})
}

// make-pulses, update-freq and capture-position allocate nothing, in
// both modes and every kind of step type.
func TestStepgenDoesNotAllocate(t *testing.T) {
	r := newSGRig(t)
	r.load("step_type=0,1,2,14", "ctrl_type=p,v,p,v")
	for i := range r.s.ch {
		c := &r.s.ch[i]
		c.enable.Set(true)
		c.maxaccel.Set(1e6)
		if c.posMode {
			c.posCmd.Set(100)
		} else {
			c.velCmd.Set(100)
		}
	}
	n := 0
	if a := testing.AllocsPerRun(1000, func() {
		r.s.makePulses(25*time.Microsecond, 0)
		if n++; n%40 == 0 {
			r.s.capturePosition(time.Millisecond, 0)
			r.s.updateFreq(time.Millisecond, 0)
		}
	}); a != 0 {
		t.Errorf("stepgen: %v allocations per base cycle", a)
	}
	assert.NotZero(t, r.s.ch[0].rawcount.Get(), "it stepped")
}

// A .hal file loads stepgen with LinuxCNC's line and names: threads,
// loadrt stepgen, addf, setp, start; the channels then run to their
// commands.
func TestStepgenHalFile(t *testing.T) {
	t.Parallel()
	const src = `loadrt threads name1=base period1=25000 name2=servo period2=1000000
loadrt stepgen step_type=0,2 ctrl_type=p,v
addf stepgen.make-pulses base
addf stepgen.capture-position servo
addf stepgen.update-freq servo
setp stepgen.0.position-scale 100
setp stepgen.0.maxaccel 100
setp stepgen.0.enable 1
setp stepgen.0.position-cmd 1.5
setp stepgen.1.enable 1
setp stepgen.1.velocity-cmd 500
start
`
	r := newSGRig(t)
	cmds, err := halfile.Parse("stepgen.hal", strings.NewReader(src))
	require.NoError(t, err)
	require.NoError(t, r.h.Load(io.Discard, cmds))
	clock, err := sim.New(r.rt)
	require.NoError(t, err)
	require.NoError(t, clock.Advance(500*time.Millisecond))
	snap, err := r.h.View().Read()
	require.NoError(t, err)
	got := map[string]uint64{}
	for _, p := range snap.Pins {
		got[p.Name] = p.Value
	}
	for _, p := range snap.Params {
		got[p.Name] = p.Value
	}
	assert.Equal(t, int32(150), int32(uint32(got["stepgen.0.counts"])), "position mode reached 1.5 × 100")
	assert.Equal(t, 500.0, math.Float64frombits(got["stepgen.1.frequency"]), "velocity mode at 500 steps/s")
	assert.InDelta(t, 250, int32(uint32(got["stepgen.1.counts"])), 1, "500 steps/s for half a second")
}
