package usercomp

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// A program loadusr started lives until the host process ends, not until
// the OS thread that happened to start it ends: PR_SET_PDEATHSIG fires
// when the starting thread exits, and a HAL task's thread exits when the
// HAL thread stops, after the runtime may have run a loadusr on it.
func TestLoadusrOutlivesItsStartingThread(t *testing.T) {
	l := &Loader{DieWithParent: true, Comps: func() ([]hal.CompInfo, error) { return nil, nil }}
	t.Cleanup(func() { _ = l.Close(time.Second) })
	cmd, _, err := halfile.ParseLine("loadusr sleep 60")
	require.NoError(t, err)
	var execErr error
	rttest.OnEndingThread(func() { _, execErr = l.Exec(context.Background(), cmd) })
	require.NoError(t, execErr)
	l.mu.Lock()
	k := l.kids[0]
	l.mu.Unlock()
	select {
	case <-k.done:
		t.Fatalf("the program ended with the thread that started it: %v", k.err)
	case <-time.After(500 * time.Millisecond):
	}
}
