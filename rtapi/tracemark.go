package rtapi

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/gortapi/gortapi/kerneldetect"
)

// The trace hook (TaskSpec.TraceMark, TraceStop): tracefs files opened at
// Start; a late wake-up costs one write of a buffer formatted in place.

const tracePrefix = "gortapi: task "

// tracer is a task's open tracefs files and marker buffer, owned by the
// task's goroutine once it runs.
type tracer struct {
	threshold int64 // ns; 0: no trace hook
	marker    int   // trace_marker, or -1
	on        int   // tracing_on, or -1 (no TraceStop)
	stopped   bool  // tracing_on was written 0
	head      int   // bytes of buf that hold "gortapi: task NAME late "
	buf       [128]byte
}

// traceStats is what the trace hook reports in Stats.
type traceStats struct {
	marks       atomic.Int64
	stopCycle   atomic.Int64
	stopLatency atomic.Int64
}

var traceOff = [1]byte{'0'}

// traceDir returns spec's TraceDir, or the live system's tracefs.
func traceDir(spec TaskSpec) (string, error) {
	if spec.TraceDir != "" {
		return spec.TraceDir, nil
	}
	dir, err := kerneldetect.FindTracefs(os.DirFS("/"))
	if err != nil {
		return "", fmt.Errorf("%w: trace hook: read the mount table: %v", ErrNotSupported, err)
	}
	if dir == "" {
		return "", fmt.Errorf("%w: trace hook: tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)", ErrNotSupported)
	}
	return dir, nil
}

// open opens the tracefs files of spec's trace hook, if any.
func (tr *tracer) open(spec TaskSpec) error {
	tr.marker, tr.on = -1, -1
	tr.threshold = int64(spec.TraceMark)
	if tr.threshold == 0 {
		return nil
	}
	dir, err := traceDir(spec)
	if err != nil {
		return err
	}
	if tr.marker, err = openTraceFile(dir, "trace_marker"); err != nil {
		return err
	}
	if spec.TraceStop {
		if tr.on, err = openTraceFile(dir, "tracing_on"); err != nil {
			tr.close()
			return err
		}
	}
	tr.head = copy(tr.buf[:], tracePrefix)
	tr.head += copy(tr.buf[tr.head:], spec.Name)
	tr.head += copy(tr.buf[tr.head:], " late ")
	tr.stopped = false
	return nil
}

// openTraceFile opens file of the tracefs dir for writing, with a typed
// error: ErrInvalid when dir or the file is not on a tracefs or file is a
// symlink, so that root never writes through a directory another user
// made; ErrPermission when not writable; ErrNotSupported otherwise.
func openTraceFile(dir, file string) (int, error) {
	fd, err := sysOpenTrace(dir, file)
	if err == nil {
		return fd, nil
	}
	var nt *notTracefsError
	switch {
	case errors.As(err, &nt):
		return -1, fmt.Errorf("%w: trace hook: %v", ErrInvalid, err)
	case errors.Is(err, os.ErrPermission):
		return -1, fmt.Errorf("%w: trace hook: %v (run as root, or give the user write access to tracefs)", ErrPermission, err)
	default:
		return -1, fmt.Errorf("%w: trace hook: %v", ErrNotSupported, err)
	}
}

// notTracefsError is a trace file the hook refuses: not on a tracefs, or
// a symlink.
type notTracefsError struct {
	path   string
	fsType int64 // statfs's f_type; 0 for a symlink
}

func (e *notTracefsError) Error() string {
	if e.fsType == 0 {
		return e.path + " is a symlink, not a tracefs file"
	}
	return fmt.Sprintf("%s is not a tracefs (file system type %#x, want tracefs %#x): give a tracefs mount "+
		"such as /sys/kernel/tracing or one of its instances/", e.path, e.fsType, tracefsMagic)
}

func (tr *tracer) close() {
	for _, fd := range []*int{&tr.marker, &tr.on} {
		if *fd >= 0 {
			sysClose(*fd)
			*fd = -1
		}
	}
}

// traceLate writes the marker of a wake-up latency ns late in cycle and,
// with TraceStop, stops tracing the first time.
// RT-safe.
func (tc *TaskContext) traceLate(latency, cycle int64) {
	tr := &tc.trace
	n := tr.head
	n += formatInt(tr.buf[n:], latency)
	n += copy(tr.buf[n:], "ns cycle ")
	n += formatInt(tr.buf[n:], cycle)
	tr.buf[n] = '\n'
	n++
	st := &tc.task.stats.trace
	if rawWrite(tr.marker, &tr.buf[0], n) {
		st.marks.Store(st.marks.Load() + 1)
	}
	if tr.on >= 0 && !tr.stopped {
		tr.stopped = true
		rawWrite(tr.on, &traceOff[0], 1)
		st.stopLatency.Store(latency)
		st.stopCycle.Store(cycle)
	}
}

// formatInt writes v (0 if negative) in decimal at the start of b, which
// holds 20 bytes, and returns the bytes written.
func formatInt(b []byte, v int64) int {
	if v <= 0 {
		b[0] = '0'
		return 1
	}
	var tmp [20]byte
	i := len(tmp)
	for v > 0 {
		i--
		tmp[i] = byte('0' + v%10)
		v /= 10
	}
	return copy(b, tmp[i:])
}

// checkTrace validates spec's trace hook; virtual: a virtual clock.
func checkTrace(spec TaskSpec, virtual bool) error {
	switch {
	case spec.TraceMark < 0:
		return fmt.Errorf("%w: negative trace mark threshold %v", ErrInvalid, spec.TraceMark)
	case spec.TraceMark == 0 && (spec.TraceStop || spec.TraceDir != ""):
		return fmt.Errorf("%w: TraceStop and TraceDir need a TraceMark threshold", ErrInvalid)
	case spec.TraceMark > 0 && virtual:
		return fmt.Errorf("%w: a trace hook on a virtual clock (its wake-ups are not the kernel's)", ErrNotSupported)
	}
	return nil
}
