package flavors

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/backend"
	"github.com/gortapi/gortapi/internal/errs"
	"github.com/gortapi/gortapi/kerneldetect"
)

// The public names are the backends' registry names, and Names lists
// every one registered: sim only in a program that imports rtapi/sim,
// which this one does not.
func TestNamesMatchBackend(t *testing.T) {
	require.Equal(t, backend.PosixName, PosixName)
	require.Equal(t, backend.RTPreemptName, RTPreemptName)
	require.Equal(t, backend.SimName, SimName)
	require.Equal(t, []string{PosixName, RTPreemptName}, Names())
}

// Select by name reports the backend and why; an unknown name is
// ErrInvalid, never a fallback.
func TestSelectByName(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the posix flavor runs only on Linux")
	}
	ch, err := Select(PosixName, Config{Kernel: &kerneldetect.Report{}})
	require.NoError(t, err)
	require.Equal(t, PosixName, ch.Name)
	require.False(t, ch.RealTime)
	require.Contains(t, ch.Why, "asked for by name")
	_, err = Select("warp", Config{Kernel: &kerneldetect.Report{}})
	require.ErrorIs(t, err, errs.Invalid)
}

// Asking for sim in a program that does not import rtapi/sim says which
// import registers it (ErrNotSupported), as database/sql does for a
// driver.
func TestSelectSimNeedsImport(t *testing.T) {
	_, err := Select(SimName, Config{Kernel: &kerneldetect.Report{}})
	require.ErrorIs(t, err, errs.NotSupported)
	require.Contains(t, err.Error(), `import _ "github.com/gortapi/gortapi/rtapi/sim"`)
}
