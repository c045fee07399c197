package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// halrun -f runs unloadrt and unload from a file (issue #40): a
// component unloaded by name, then unload all; show comp lists nothing
// after; and -I's stdin runs them too.
func TestHalrunUnload(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "unload.hal")
	require.NoError(t, os.WriteFile(file, []byte(`loadrt threads name1=servo period1=1000000
loadrt siggen
loadrt pid count=1
addf pid.0.do-pid-calcs servo
net fb siggen.0.sine => pid.0.feedback
unloadrt pid
getp siggen.0.amplitude
unload all
show comp
`), 0o600))
	out, code := halrun(t, dir, "", nil, "-f", file)
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "1\nLoaded HAL Components:\n")
	assert.NotContains(t, out, "siggen ", "unload all unloaded it")
	assert.NotContains(t, out, "pid ")

	out, code = halrun(t, dir, "unloadrt pid\nunloadrt pid\nunload siggen\nshow comp\n", nil, "-I", "-f", "testdata/servo-loop.hal")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "<stdin>:2: hal: unloadrt: component 'pid' is not loaded")
	comps := out[strings.LastIndex(out, "Loaded HAL Components:"):]
	assert.NotContains(t, comps, " siggen ")
	assert.NotContains(t, comps, " pid ")
	assert.Contains(t, comps, " sim_motor ")
}
