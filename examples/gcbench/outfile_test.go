package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/examples/internal/outfile/outfiletest"
)

// A symlink planted at -json or -trace is replaced by the output, never
// written through (issue #37 item 5). gcbench's rows need a PREEMPT_RT
// kernel, so its two writers are run directly.
func TestOutputSymlinkNotFollowed(t *testing.T) {
	dir := t.TempDir()
	jsonName, traceName := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.trace")
	victims := []outfiletest.Victim{outfiletest.Plant(t, jsonName), outfiletest.Plant(t, traceName)}
	require.NoError(t, writeJSON(jsonName, []result{{Row: row{Name: "defaults quiet"}, Samples: 1}}))
	stop, err := startTrace(traceName)
	require.NoError(t, err)
	require.NoError(t, stop())
	for _, v := range victims {
		v.Check(t)
	}
}
