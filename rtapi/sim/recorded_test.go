package sim_test

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// simDigestsFile holds, for each seed of randomScenario, the trace digest
// and a hash of the call log (outcomes by sentinel, clocks, statistics)
// that the simulation gave when the file was written: by the scheduler as
// it was before its rewrite into sim_*.go files. A change to the scheduler that keeps its semantics keeps them
// all; one that changes them on purpose must say why and rewrite the
// file (GORTAPI_SIM_DIGESTS=write).
const simDigestsFile = "testdata/sim-random-digests.txt"

// Random programs give the traces recorded before: the scheduler's
// observable behaviour does not drift between versions.
func TestSimRandomScenariosMatchRecordedTraces(t *testing.T) {
	if testing.Short() {
		t.Skip("300 simulations; not in -short")
	}
	var got []string
	for seed := uint64(1); seed <= 300; seed++ {
		d, l := randomScenario(t, seed)
		h := fnv.New64a()
		h.Write([]byte(l))
		got = append(got, fmt.Sprintf("%d %016x %016x", seed, d, h.Sum64()))
	}
	if os.Getenv("GORTAPI_SIM_DIGESTS") == "write" {
		f, err := os.Create(simDigestsFile)
		require.NoError(t, err)
		for _, line := range got {
			fmt.Fprintln(f, line)
		}
		require.NoError(t, f.Close())
		return
	}
	f, err := os.Open(simDigestsFile)
	require.NoError(t, err)
	defer f.Close()
	var want []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		want = append(want, sc.Text())
	}
	require.NoError(t, sc.Err())
	require.Equal(t, want, got)
}
