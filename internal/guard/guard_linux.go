package guard

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Guard is the parent's handle on a running guard process.
type Guard struct {
	cmd    *exec.Cmd
	cmdW   *os.File // commands to the guard (non-blocking)
	cmdFd  int
	events *os.File
	done   chan struct{} // closed when the event reader has ended
	mu     sync.Mutex
	closed bool
	// sending counts sends in flight; shut fails new ones, so that Close
	// closes the pipe once no write can use it (with no lock to wait on).
	sending atomic.Int32
	shut    atomic.Bool
	onEvent func(Event)
	onExit  func(error)
	refused error  // why the guard runs below its priority
	page    []byte // the shared page of cycle counters
	slots   []Slot
	slotMu  sync.Mutex
	free    []int // slots given back
	used    int   // slots handed out at least once
}

// Start starts the guard process at SCHED_FIFO prio, looking at the
// watched threads every tick and reporting to onEvent (from a goroutine of
// its own). onExit is called once if the guard ends before Close. Start
// returns once the guard runs; Refused says whether it got prio.
func Start(prio int, tick time.Duration, onEvent func(Event), onExit func(error)) (*Guard, error) {
	if prio < 1 || prio > 99 || tick < 100*time.Microsecond || tick > time.Second {
		return nil, fmt.Errorf("%w: priority %d, tick %v", ErrStart, prio, tick)
	}
	page, pageFile, err := sharedPage()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	defer pageFile.Close() // the child has its copy
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		_ = unix.Munmap(page)
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	evR, evW, err := os.Pipe()
	if err != nil {
		cmdR.Close()
		cmdW.Close()
		_ = unix.Munmap(page)
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	cmd := &exec.Cmd{
		Path:   "/proc/self/exe",
		Args:   []string{os.Args[0] + " (gortapi guard)"},
		Env:    []string{envKey + "=" + strconv.Itoa(os.Getpid()) + "," + strconv.Itoa(prio) + "," + strconv.FormatInt(int64(tick), 10), "GOMAXPROCS=1", "GOGC=off"},
		Stdin:  cmdR,
		Stdout: evW,
		Stderr: os.Stderr,
		// The guard checks its parent at every look; no Pdeathsig, which
		// would fire when the thread that started it ends.
		ExtraFiles: []*os.File{pageFile},
	}
	err = cmd.Start()
	cmdR.Close()
	evW.Close()
	if err != nil {
		cmdW.Close()
		evR.Close()
		_ = unix.Munmap(page)
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	g := &Guard{cmd: cmd, cmdW: cmdW, events: evR, done: make(chan struct{}), onEvent: onEvent, onExit: onExit,
		page: page, slots: slotsOf(page)}
	// Commands never block: the watchdog writes from its real-time thread.
	g.cmdFd = int(cmdW.Fd())
	if err := unix.SetNonblock(g.cmdFd, true); err != nil {
		g.kill()
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	var b [recordSize]byte
	_ = evR.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(evR, b[:]); err != nil {
		g.kill()
		return nil, fmt.Errorf("%w: no word from it: %w", ErrStart, err)
	}
	_ = evR.SetReadDeadline(time.Time{})
	ready := getRecord(b[:])
	go g.read()
	if ready.op != evReady {
		g.Close()
		return nil, fmt.Errorf("%w: it said %d first", ErrStart, ready.op)
	}
	if ready.arg != 0 {
		// Still useful below the tasks' priority, on other CPUs.
		g.refused = fmt.Errorf("SCHED_FIFO %d: %w", prio, os.NewSyscallError("sched_setscheduler", unix.Errno(ready.arg)))
	}
	return g, nil
}

func (g *Guard) kill() {
	_ = g.cmd.Process.Kill()
	_ = g.cmd.Wait()
	g.cmdW.Close()
	g.events.Close()
}

// read hands the guard's events on until it ends.
func (g *Guard) read() {
	defer close(g.done)
	var b [recordSize]byte
	for {
		if _, err := io.ReadFull(g.events, b[:]); err != nil {
			break
		}
		r := getRecord(b[:])
		switch r.op {
		case evDemoted:
			g.onEvent(Event{Tid: int(r.tid), Demoted: true, Ran: time.Duration(r.value)})
		case evRestored:
			var err error
			if r.arg != 0 {
				err = os.NewSyscallError("sched_setscheduler", unix.Errno(r.arg))
			}
			g.onEvent(Event{Tid: int(r.tid), Err: err})
		case evRefused:
			g.onEvent(Event{Tid: int(r.tid), Err: fmt.Errorf("guard cannot watch it: %w", unix.Errno(r.arg))})
		case evFault:
			var err error
			if r.arg != 0 {
				err = os.NewSyscallError("sched_setscheduler", unix.Errno(r.arg))
			}
			g.onEvent(Event{Tid: int(r.tid), Fault: true, Stalled: time.Duration(r.value), Cycles: r.value2, Err: err})
		case evTick:
			g.onEvent(Event{Tick: true})
		}
	}
	err := g.cmd.Wait()
	g.mu.Lock()
	closed := g.closed
	g.mu.Unlock()
	if !closed && g.onExit != nil {
		if err == nil {
			err = errors.New("exited")
		}
		g.onExit(err)
	}
}

// Watch asks the guard to watch thread tid of this process, at SCHED_FIFO
// or SCHED_RR priority prio, under one rule or both. Spin rule (bound >
// 0): when it runs for bound without a switch and slot's Cycles (when
// slot is a slot of the page) did not change, it is demoted until
// switched out once. Watchdog rule (timeout > 0): when slot's Cycles did
// not change for timeout, Idle unset, and the thread was on its CPU for
// half of that, it is demoted for good and reported (Event.Fault). It
// neither allocates nor blocks (errFull when the pipe is full), so a
// real-time thread may call it.
func (g *Guard) Watch(tid, prio int, bound, timeout time.Duration, slot int) error {
	return g.send(record{op: opWatch, tid: uint32(tid), arg: uint32(prio), slot: uint32(max(slot, 0)),
		value: int64(bound), value2: int64(timeout)})
}

// NewSlot hands out a slot of the shared page and its index; ok is false
// when all are in use. Give it back with FreeSlot once the thread is
// unwatched.
func (g *Guard) NewSlot() (s *Slot, index int, ok bool) {
	g.slotMu.Lock()
	defer g.slotMu.Unlock()
	switch {
	case len(g.free) > 0:
		index = g.free[len(g.free)-1]
		g.free = g.free[:len(g.free)-1]
	case g.used < len(g.slots):
		index = g.used
		g.used++
	default:
		return nil, 0, false
	}
	s = &g.slots[index]
	s.Cycles.Store(0)
	s.Idle.Store(0)
	return s, index, true
}

// SlotsInUse counts the slots handed out and not given back.
func (g *Guard) SlotsInUse() int {
	g.slotMu.Lock()
	defer g.slotMu.Unlock()
	return g.used - len(g.free)
}

// FreeSlot gives slot index back.
func (g *Guard) FreeSlot(index int) {
	g.slotMu.Lock()
	defer g.slotMu.Unlock()
	g.free = append(g.free, index)
}

// Unwatch stops watching tid. Like Watch, it neither allocates nor blocks.
func (g *Guard) Unwatch(tid int) error {
	return g.send(record{op: opUnwatch, tid: uint32(tid)})
}

var (
	errFull   = errors.New("guard: command pipe full")
	errClosed = fmt.Errorf("guard: %w", os.ErrClosed)
)

func (g *Guard) send(r record) error {
	g.sending.Add(1)
	defer g.sending.Add(-1)
	if g.shut.Load() {
		return errClosed
	}
	var b [recordSize]byte
	r.put(&b)
	_, _, errno := unix.RawSyscall(unix.SYS_WRITE, uintptr(g.cmdFd), uintptr(unsafe.Pointer(&b[0])), recordSize)
	switch errno {
	case 0:
		return nil
	case unix.EAGAIN:
		return errFull
	}
	return os.NewSyscallError("write", errno)
}

// Refused says why the guard runs at SCHED_OTHER instead of its
// priority; nil when it has it.
func (g *Guard) Refused() error { return g.refused }

// Pid is the guard process's pid.
func (g *Guard) Pid() int { return g.cmd.Process.Pid }

// Close ends the guard and waits for it to exit. Call it once the watched
// threads have ended: a demoted one may not get its policy back.
func (g *Guard) Close() error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		<-g.done
		return nil
	}
	g.closed = true
	g.mu.Unlock()
	g.shut.Store(true)
	for g.sending.Load() != 0 {
		time.Sleep(time.Millisecond)
	}
	err := g.cmdW.Close()
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case <-g.done:
	case <-t.C:
		_ = g.cmd.Process.Kill()
		<-g.done
	}
	g.events.Close()
	// The page stays mapped: a task thread abandoned by Close may still
	// store its count there.
	return err
}
