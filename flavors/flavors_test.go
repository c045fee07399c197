package flavors

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/backend"
	"github.com/gortapi/gortapi/internal/errs"
	"github.com/gortapi/gortapi/kerneldetect"
)

// The public names are the backends' registry names, and Names lists
// every one of them.
func TestNamesMatchBackend(t *testing.T) {
	require.Equal(t, backend.PosixName, PosixName)
	require.Equal(t, backend.RTPreemptName, RTPreemptName)
	require.Equal(t, backend.SimName, SimName)
	require.Equal(t, []string{PosixName, RTPreemptName, SimName}, Names())
}

// Select by name reports the backend and why; an unknown name is
// ErrInvalid, never a fallback.
func TestSelectByName(t *testing.T) {
	ch, err := Select(SimName, Config{Kernel: &kerneldetect.Report{}})
	require.NoError(t, err)
	require.Equal(t, SimName, ch.Name)
	require.False(t, ch.RealTime)
	require.Contains(t, ch.Why, "asked for by name")
	_, err = Select("warp", Config{Kernel: &kerneldetect.Report{}})
	require.ErrorIs(t, err, errs.Invalid)
}
