package hal

import (
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/stretchr/testify/require"
)

// The stats segment's 64-bit counters are atomics: they must be 8-byte
// aligned on 32-bit architectures too, and halmon built for one
// architecture reads a host built for another.
func TestStatsLayout(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	rttest.RequireLayout64(t, reflect.TypeFor[statsLayout]())
}

// A thread count another process wrote is checked as the int64 it is
// stored as: where int has 32 bits, 1<<32+1 used to pass as 1.
func TestMonitorRefusesWideThreadCount(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	p, m, _ := statsFixture(t)
	atomic.StoreInt64(&p.layout.Header.NThreads, 1<<32+1) // the monitor's own view is read-only
	_, err := m.Read()
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	require.ErrorIs(t, err, ErrCorrupt)
}
