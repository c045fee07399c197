package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/examples/internal/outfile/outfiletest"
)

// A symlink planted at -json, -doc or LATENCY_BENCH_TRACE's file is
// replaced by the output, never written through (issue #37 item 5). A
// benchmark run takes minutes, so its three writers are run directly.
func TestOutputSymlinkNotFollowed(t *testing.T) {
	dir := t.TempDir()
	jsonName, docName, traceName := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.md"), filepath.Join(dir, "r.trace")
	victims := []outfiletest.Victim{outfiletest.Plant(t, jsonName), outfiletest.Plant(t, docName), outfiletest.Plant(t, traceName)}
	require.NoError(t, writeJSON(jsonName, map[string]int{"rows": 1}))
	require.NoError(t, writeDoc(docName, "# latency-bench\n"))
	startTrace(traceName)()
	for _, v := range victims {
		v.Check(t)
	}
}
