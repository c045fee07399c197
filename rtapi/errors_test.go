package rtapi_test

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/kerneldetect"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hist"
	"github.com/gortapi/gortapi/rtapi/ipc"
	"github.com/gortapi/gortapi/rtapi/msg"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// One error set: each public call, driven to each of its failures, returns
// an error that matches the rtapi sentinel of that failure with errors.Is
// (and, where the failure has one, the package's own sentinel). The sim
// controller's errors are checked the same way in package rtapi/sim.
func TestOneErrorSet(t *testing.T) {
	rt := open(t, rtapi.Options{Flavor: "posix", Instance: 610000 + os.Getpid()})
	closed, err := rtapi.Open(rtapi.Options{Flavor: "posix", Instance: 620000 + os.Getpid()})
	require.NoError(t, err)
	require.NoError(t, closed.Close())

	newTask := func(name string) *rtapi.Task {
		task, err := rt.NewTask(rtapi.TaskSpec{Name: name, Period: time.Millisecond}, loop)
		require.NoError(t, err)
		return task
	}
	running := newTask("running")
	require.NoError(t, running.Start())
	created := newTask("created")

	seg, err := rt.ShmNew(0xe1, 4096)
	require.NoError(t, err)
	t.Cleanup(func() { seg.Delete() })
	closedSeg, err := rt.ShmNew(0xe2, 64)
	require.NoError(t, err)
	require.NoError(t, closedSeg.Delete())

	var held ipc.Mutex
	require.NoError(t, held.TryLock())
	var sem ipc.Semaphore
	ring, err := ipc.RecordRingAt(seg, 0, ipc.RingSize(1024))
	require.NoError(t, err)

	cases := []struct {
		call     string
		err      error
		sentinel error // rtapi's
		own      error // the package's, where it has one
	}{
		// rtapi
		{"Open with an unknown flavor", openErr(rtapi.Options{Flavor: "no-such"}), rtapi.ErrInvalid, nil},
		{"Open with a negative StopTimeout", openErr(rtapi.Options{Flavor: "posix", StopTimeout: -1}), rtapi.ErrInvalid, nil},
		{"NewTask with a negative period", newTaskErr(rt, rtapi.TaskSpec{Name: "neg", Period: -1}), rtapi.ErrInvalid, nil},
		{"NewTask with a name in use", newTaskErr(rt, rtapi.TaskSpec{Name: "running", Period: time.Millisecond}), rtapi.ErrInvalid, nil},
		{"NewTask on a closed RT", newTaskErr(closed, rtapi.TaskSpec{Name: "late", Period: time.Millisecond}), rtapi.ErrClosed, nil},
		{"Start twice", running.Start(), rtapi.ErrState, nil},
		{"Resume without Pause", running.Resume(), rtapi.ErrState, nil},
		{"Wait on a task never started", created.Wait(), rtapi.ErrState, nil},
		{"SetMsgLevel out of range", rt.SetMsgLevel(msg.Level(42)), rtapi.ErrInvalid, msg.ErrInvalid},
		{"MsgLogger on a closed RT", second(closed.MsgLogger("x")), rtapi.ErrClosed, nil},
		{"Stats.Since a later mark", second(rtapi.Stats{Name: "a", Cycles: 1}.Since(rtapi.Stats{Name: "a", Cycles: 2})), rtapi.ErrInvalid, nil},
		// shared memory
		{"ShmNew with a negative size", second(rt.ShmNew(0xe3, -1)), rtapi.ErrInvalid, shm.ErrInvalid},
		{"ShmNew of another size", second(rt.ShmNew(0xe1, 8192)), rtapi.ErrInvalid, shm.ErrSizeMismatch},
		{"ShmAttach of no segment", second(rt.ShmAttach(0xe4)), rtapi.ErrNotExist, shm.ErrNotExist},
		{"ShmNew on a closed RT", second(closed.ShmNew(0xe5, 64)), rtapi.ErrClosed, nil},
		{"shm.Create of a key in use", second(shm.Create(shm.Options{Instance: rt.Instance()}, 0xe1, 4096)), rtapi.ErrExist, shm.ErrExist},
		{"shm.View of a pointer type", second(shm.View[struct{ S string }](seg, 0)), rtapi.ErrInvalid, shm.ErrInvalid},
		{"shm.View misaligned", second(shm.View[uint64](seg, 3)), rtapi.ErrInvalid, shm.ErrInvalid},
		{"shm.View of a deleted segment", second(shm.View[uint64](closedSeg, 0)), rtapi.ErrClosed, shm.ErrClosed},
		{"Delete after Close", deleteAfterClose(t, rt), rtapi.ErrClosed, shm.ErrClosed},
		{"ShmAttach of a segment others may write", untrusted(t, rt), rtapi.ErrPermission, shm.ErrUntrusted},
		{"Segment.Check of a truncated file", truncated(t, rt), rtapi.ErrCorrupt, shm.ErrTruncated},
		// ipc
		{"Mutex.TryLock of a held mutex", held.TryLock(), rtapi.ErrBusy, ipc.ErrBusy},
		{"Mutex.Unlock of an unlocked mutex", new(ipc.Mutex).Unlock(), rtapi.ErrState, ipc.ErrNotLocked},
		{"Semaphore.TryTake of zero", sem.TryTake(), rtapi.ErrBusy, ipc.ErrBusy},
		{"Semaphore.TakeDeadline past", sem.TakeDeadline(rtapi.MonotonicNow()), rtapi.ErrTimeout, ipc.ErrTimeout},
		{"Mutex.LockDeadline past", held.LockDeadline(rtapi.MonotonicNow()), rtapi.ErrTimeout, ipc.ErrTimeout},
		{"RecordRing.Get of an empty ring", second(ring.Get(make([]byte, 64))), rtapi.ErrBusy, ipc.ErrEmpty},
		{"RecordRing.Put of a record too large", ring.Put(make([]byte, 4096)), rtapi.ErrInvalid, ipc.ErrInvalid},
		{"RecordRingAt misaligned", second(ipc.RecordRingAt(seg, 8, 1024)), rtapi.ErrInvalid, ipc.ErrInvalid},
		{"StreamRingAt over a record ring", streamOverRecord(t, rt), rtapi.ErrInvalid, ipc.ErrWrongMode},
		{"RecordRingAt of a damaged ring", damagedRing(t, rt), rtapi.ErrCorrupt, ipc.ErrCorrupt},
		{"RecordRingAt before the creator laid it out", uninitialisedRing(t, rt), rtapi.ErrBusy, ipc.ErrNotInitialised},
		// msg, hist, kerneldetect
		{"msg.NewLogger over no ring", second(msg.NewLogger(nil, "x")), rtapi.ErrInvalid, msg.ErrInvalid},
		{"hist.Validate of a zero width", hist.Validate(0, time.Second), rtapi.ErrInvalid, nil},
		{"Snapshot.Sub of a later one", second(hist.Snapshot{}.Sub(hist.Snapshot{Width: 1, Count: 1, Counts: []uint64{1}})), rtapi.ErrInvalid, nil},
		{"kerneldetect.ParseKind of garbage", second(kerneldetect.ParseKind("garbage")), rtapi.ErrInvalid, kerneldetect.ErrInvalid},
		{"kerneldetect.DetectFS of no FS", second(kerneldetect.DetectFS(nil)), rtapi.ErrInvalid, kerneldetect.ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.call, func(t *testing.T) {
			require.Error(t, c.err)
			require.ErrorIs(t, c.err, c.sentinel, "%v", c.err)
			if c.own != nil {
				require.ErrorIs(t, c.err, c.own, "%v", c.err)
			}
		})
	}
}

func openErr(o rtapi.Options) error {
	rt, err := rtapi.Open(o)
	if err == nil {
		rt.Close()
	}
	return err
}

func newTaskErr(rt *rtapi.RT, spec rtapi.TaskSpec) error {
	_, err := rt.NewTask(spec, loop)
	return err
}

// second returns the error of a call that returns a value and an error.
func second[T any](_ T, err error) error { return err }

func deleteAfterClose(t *testing.T, rt *rtapi.RT) error {
	seg, err := rt.ShmNew(0xe6, 64)
	require.NoError(t, err)
	require.NoError(t, seg.Close())
	err = seg.Delete()
	require.NoError(t, rt.ShmRemove(0xe6))
	return err
}

func streamOverRecord(t *testing.T, rt *rtapi.RT) error {
	seg, err := rt.ShmNew(0xe7, ipc.RingSize(1024))
	require.NoError(t, err)
	defer seg.Delete()
	_, err = ipc.RecordRingAt(seg, 0, ipc.RingSize(1024))
	require.NoError(t, err)
	other, err := rt.ShmAttach(0xe7)
	require.NoError(t, err)
	defer other.Close()
	_, err = ipc.StreamRingAt(other, 0, ipc.RingSize(1024))
	return err
}

// damagedRing opens a ring whose magic another process overwrote.
func damagedRing(t *testing.T, rt *rtapi.RT) error {
	seg, err := rt.ShmNew(0xe8, ipc.RingSize(1024))
	require.NoError(t, err)
	defer seg.Delete()
	_, err = ipc.RecordRingAt(seg, 0, ipc.RingSize(1024))
	require.NoError(t, err)
	copy(seg.Bytes(), []byte{0xef, 0xbe, 0xad, 0xde})
	other, err := rt.ShmAttach(0xe8)
	require.NoError(t, err)
	defer other.Close()
	_, err = ipc.RecordRingAt(other, 0, ipc.RingSize(1024))
	return err
}

// uninitialisedRing opens a ring the creator has not laid out yet.
func uninitialisedRing(t *testing.T, rt *rtapi.RT) error {
	seg, err := rt.ShmNew(0xe9, ipc.RingSize(1024))
	require.NoError(t, err)
	defer seg.Delete()
	other, err := rt.ShmAttach(0xe9)
	require.NoError(t, err)
	defer other.Close()
	_, err = ipc.RecordRingAt(other, 0, ipc.RingSize(1024))
	return err
}

// untrusted attaches a segment whose file anyone may write.
func untrusted(t *testing.T, rt *rtapi.RT) error {
	seg, err := rt.ShmNew(0xea, 64)
	require.NoError(t, err)
	defer seg.Delete()
	require.NoError(t, os.Chmod(seg.Path(), 0o666))
	_, err = rt.ShmAttach(0xea)
	return err
}

// truncated checks a segment whose file another process truncated.
func truncated(t *testing.T, rt *rtapi.RT) error {
	seg, err := rt.ShmNew(0xeb, 4096)
	require.NoError(t, err)
	defer seg.Delete()
	require.NoError(t, os.Truncate(seg.Path(), 100))
	return seg.Check()
}
