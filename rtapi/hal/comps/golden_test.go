package comps_test

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi/hal"
)

// ulpTolerant are the values gortapi computes with Go's math.Sin and
// math.Cos where LinuxCNC calls glibc's: they may differ in the last bit.
var ulpTolerant = map[string]bool{"siggen.0.sine": true, "siggen.0.cosine": true}

// TestLinuxCNCGolden runs each testdata/linuxcnc/*.script on gortapi's
// components and compares every value it shows with what LinuxCNC's own
// code printed for the same script (testdata/linuxcnc/README.md): bit for
// bit, but for sine and cosine, which may differ by one ulp.
func TestLinuxCNCGolden(t *testing.T) {
	scripts, err := filepath.Glob("testdata/linuxcnc/*.script")
	require.NoError(t, err)
	require.NotEmpty(t, scripts)
	for _, s := range scripts {
		t.Run(strings.TrimSuffix(filepath.Base(s), ".script"), func(t *testing.T) {
			t.Parallel()
			runGolden(t, s)
		})
	}
}

func runGolden(t *testing.T, script string) {
	src, err := os.ReadFile(script)
	require.NoError(t, err)
	golden, err := os.ReadFile(strings.TrimSuffix(script, ".script") + ".golden")
	require.NoError(t, err)
	want := strings.Split(strings.TrimSpace(string(golden)), "\n")

	var loads []string
	var cmds [][]string
	period := "1000000"
	for line := range strings.Lines(string(src)) {
		line, _, _ = strings.Cut(line, "#")
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case f[0] == "loadrt":
			loads = append(loads, line)
		case f[0] == "period":
			require.Empty(t, cmds, "period comes before the first command")
			period = f[1]
		default:
			cmds = append(cmds, f)
		}
	}
	r := load(t, "loadrt threads name1=t period1="+period+"\n"+strings.Join(loads, ""))
	for _, f := range r.h.Functs() {
		require.NoError(t, r.h.AddFunct(f.Name(), "t", hal.Last))
	}
	shown := 0
	for _, c := range cmds {
		switch c[0] {
		case "setp":
			r.setp(c[1], c[2])
		case "link":
			if _, err := r.h.GetS(c[2]); err != nil {
				require.NoError(t, r.h.NewSignal(c[2], r.pinType(c[1])))
			}
			require.NoError(t, r.h.Link(c[1], c[2]))
		case "sets":
			require.NoError(t, r.h.SetS(c[1], c[2]))
		case "run":
			n, err := strconv.Atoi(c[1])
			require.NoError(t, err)
			r.cycles("t", n)
		case "show":
			for _, name := range c[1:] {
				require.Less(t, shown, len(want), "more values shown than the golden file has")
				wname, wval, _ := strings.Cut(want[shown], " ")
				require.Equal(t, wname, name, "golden line %d", shown+1)
				checkGolden(t, name, r.get(name), wval, shown+1)
				shown++
			}
		default:
			t.Fatalf("unknown script command %q", c[0])
		}
	}
	require.Equal(t, len(want), shown, "values shown")
}

func checkGolden(t *testing.T, name string, got float64, wval string, line int) {
	t.Helper()
	w, err := strconv.ParseFloat(wval, 64)
	require.NoError(t, err)
	if math.Float64bits(got) == math.Float64bits(w) {
		return
	}
	if ulpTolerant[name] && math.Abs(got-w) <= math.Abs(math.Nextafter(w, math.Inf(1))-w) {
		return
	}
	t.Errorf("golden line %d: %s = %v (%s), LinuxCNC %v (%s)", line, name, got, strconv.FormatFloat(got, 'x', -1, 64), w, wval)
}

// pinType is the type of the pin named name: a script's link makes its
// signal of that type.
func (r *rig) pinType(name string) hal.Type {
	r.t.Helper()
	s, err := r.h.View().Read()
	require.NoError(r.t, err)
	for _, p := range s.Pins {
		if p.Name == name {
			return p.Type
		}
	}
	r.t.Fatalf("no pin %q", name)
	return 0
}
