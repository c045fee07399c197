package hal_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// checkSnapshot reports what in s is not a state the churn below makes:
// a signal's type is the one its name's first letter says, every pin and
// parameter belongs to the component its name starts with.
func checkSnapshot(s hal.Snapshot) error {
	types := map[byte]hal.Type{'f': hal.TypeFloat, 'b': hal.TypeBit, 's': hal.TypeS32}
	for _, sig := range s.Signals {
		if sig.Name == "" || types[sig.Name[0]] != sig.Type {
			return fmt.Errorf("signal %q of type %v", sig.Name, sig.Type)
		}
		for _, p := range sig.Pins {
			if !strings.HasPrefix(p, "a.") && !strings.HasPrefix(p, "b.") {
				return fmt.Errorf("signal %q has pin %q", sig.Name, p)
			}
		}
	}
	for _, p := range s.Pins {
		if !strings.HasPrefix(p.Name, p.Owner+".") {
			return fmt.Errorf("pin %q owned by %q", p.Name, p.Owner)
		}
	}
	for _, p := range s.Params {
		if !strings.HasPrefix(p.Name, p.Owner+".") {
			return fmt.Errorf("parameter %q owned by %q", p.Name, p.Owner)
		}
	}
	return nil
}

// Readers attached while signals, pins and parameters are made, deleted
// and their slots reused see only whole entries: another process's Data
// (through the segment) and the host's own (HAL.Data).
func TestDataReadersDuringSlotChurn(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	registerTestComps()
	t.Run("shared", func(t *testing.T) { slotChurn(t, 0x5107) })
	t.Run("private", func(t *testing.T) { slotChurn(t, 0) })
}

func slotChurn(t *testing.T, key uint32) {
	dir := t.TempDir()
	rt := openRT(t, rtapi.Options{Flavor: "sim"})
	h, err := hal.New(rt, hal.Options{DataKey: key, ShmDir: dir})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	twoComps(t, h)
	readers := []*hal.View{h.View()}
	if key != 0 {
		other, err := hal.OpenView(hal.ViewOptions{DataKey: key, Dir: dir})
		require.NoError(t, err)
		t.Cleanup(func() { _ = other.Close() })
		readers = append(readers, other)
	}

	done := make(chan struct{})
	var wg sync.WaitGroup
	read := func(d *hal.View) {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			s, err := d.Read()
			if errors.Is(err, rtapi.ErrBusy) {
				continue
			}
			if !assert.NoError(t, err) || !assert.NoError(t, checkSnapshot(s)) {
				return
			}
		}
	}
	for _, d := range readers {
		wg.Add(1)
		go read(d)
	}

	prefix := []string{"f", "b", "s"}
	types := []hal.Type{hal.TypeFloat, hal.TypeBit, hal.TypeS32}
	pinOf := []string{"b.in", "b.bit-in", "a.s32-out"}
	for i := range 2 * hal.MaxSignals {
		k := i % 3
		name := fmt.Sprintf("%s%d", prefix[k], i)
		if !assert.NoError(t, h.NewSignal(name, types[k])) ||
			!assert.NoError(t, h.Net(name, pinOf[k])) ||
			!assert.NoError(t, h.NewSignal(fmt.Sprintf("%s%d-spare", prefix[(k+1)%3], i), types[(k+1)%3])) {
			break
		}
		if i%64 == 0 {
			assert.Error(t, h.LoadRT("tpart", "pins=40", "fail=1"))
		}
		assert.NoError(t, h.DeleteSignal(name))
		assert.NoError(t, h.DeleteSignal(fmt.Sprintf("%s%d-spare", prefix[(k+1)%3], i)))
	}
	close(done)
	wg.Wait()
	for _, d := range readers {
		s, err := d.Read()
		require.NoError(t, err)
		require.NoError(t, checkSnapshot(s))
		assert.Empty(t, s.Signals)
		assert.Len(t, s.Pins, 9)
	}
}
