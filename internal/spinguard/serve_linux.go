package spinguard

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/sys"
)

// envKey marks a guard process; its value is "ppid,priority,tick-ns".
const envKey = "GORTAPI_SPINGUARD"

func init() {
	if v, ok := os.LookupEnv(envKey); ok {
		os.Exit(serve(v))
	}
}

// recordSize is the size of every command and event: one write of it on a
// pipe is atomic (under PIPE_BUF).
const recordSize = 24

// Commands, parent to guard.
const (
	opWatch   = 1 // tid, prio, bound
	opUnwatch = 2 // tid
)

// Events, guard to parent.
const (
	evReady    = 1 // prio set (errno 0) or refused (errno)
	evDemoted  = 2 // tid ran bound ns without a break; ran = ns on CPU
	evRestored = 3 // tid has its policy back (errno if that failed)
	evRefused  = 4 // a watch the guard cannot take (errno)
)

// record is a command or an event on the wire: little-endian
// op/kind, tid, prio/errno, pad, then a 64-bit value (bound or ran).
type record struct {
	op    uint32
	tid   uint32
	arg   uint32
	value int64
}

func (r record) put(b *[recordSize]byte) {
	binary.LittleEndian.PutUint32(b[0:], r.op)
	binary.LittleEndian.PutUint32(b[4:], r.tid)
	binary.LittleEndian.PutUint32(b[8:], r.arg)
	binary.LittleEndian.PutUint32(b[12:], 0)
	binary.LittleEndian.PutUint64(b[16:], uint64(r.value))
}

func getRecord(b []byte) record {
	return record{
		op:    binary.LittleEndian.Uint32(b[0:]),
		tid:   binary.LittleEndian.Uint32(b[4:]),
		arg:   binary.LittleEndian.Uint32(b[8:]),
		value: int64(binary.LittleEndian.Uint64(b[16:])),
	}
}

// maxWatched bounds the guard's table; a watch beyond it is refused.
const maxWatched = 1024

// watched is one guarded thread.
type watched struct {
	tid    int
	prio   int
	bound  int64
	fd     int // its schedstat
	stat   int // its stat
	status int // its status, for the voluntary switches
	// pcount is the thread's switch-in count at the last look; since
	// when it last changed, or the thread was last seen not runnable, or
	// was given back its policy. A thread seen runnable at every look
	// since then, never switched in again, has been on its CPU (or
	// waiting for it) the whole time.
	pcount uint64
	since  int64
	ran    uint64 // CPU time at since, for the report
	// nv is the thread's count of voluntary switches (sleeps) at since,
	// when nvKnown: read only once it was switched in again while
	// runnable, which is how a spin looks on the guard's own CPU.
	nv        uint64
	nvKnown   bool
	demoted   bool
	demotedAt int64
}

// guard is the state of the guard process's loop.
type guard struct {
	ppid    int
	prio    int
	tick    int64
	tid     int
	in, out int // command and event descriptors: stdin and stdout
	table   []watched
	cmd     [recordSize * 64]byte
	cmdLen  int
	buf     [128]byte
	stat    [512]byte  // the start of a stat file: pid, (comm), state
	status  [4096]byte // a status file
}

// serve runs the guard process. It returns the exit status.
func serve(arg string) int {
	var ppid, prio int
	var tick int64
	parts := strings.Split(arg, ",")
	if len(parts) == 3 {
		ppid, _ = strconv.Atoi(parts[0])
		prio, _ = strconv.Atoi(parts[1])
		tick, _ = strconv.ParseInt(parts[2], 10, 64)
	}
	// A parent PID of 1 is a host in a container, PID 1 of its namespace:
	// when it exits the kernel kills the namespace, guard included.
	if ppid < 1 || prio < 1 || prio > 99 || tick < 100_000 || tick > 1_000_000_000 {
		fmt.Fprintf(os.Stderr, "gortapi spin guard: bad %s=%q\n", envKey, arg)
		return 2
	}
	if os.Getppid() != ppid {
		return 0 // the process to guard is gone already
	}
	g := &guard{ppid: ppid, prio: prio, tick: tick, in: 0, out: 1, table: make([]watched, 0, maxWatched)}
	// Page faults at the top priority are what it can afford least. Later
	// mappings are locked as they are touched: faulting a new thread's
	// whole stack in at once ran 10-30 ms at the guard's priority.
	_ = sys.LockMemory()
	_ = unix.SetNonblock(0, true)
	_ = unix.SetNonblock(1, true)
	g.tid = unix.Gettid()
	// Every thread of the guard runs at its priority, and threads made
	// later inherit it. The loop's goroutine is not locked to its thread:
	// the runtime can move it to another of its threads (it did, after
	// preempting it), and a thread left SCHED_OTHER there waited 133 ms
	// behind the very spin the guard was to end (docs/GC.md, "The
	// guard's own threads").
	errno := setScheduler(0, int(sys.SchedFIFO), prio)
	raiseOtherThreads(g.tid, prio)
	g.send(record{op: evReady, arg: uint32(errno)})
	g.loop()
	return 0
}

// loop sleeps until its next look (nextLook), reads the commands, looks
// at every watched thread; until the parent closes its end of the command
// pipe or exits.
func (g *guard) loop() {
	next := nanotime()
	for {
		sleepUntil(next)
		if !g.commands() || rawGetppid() != g.ppid {
			return
		}
		if tid := int(rawGettid()); tid != g.tid {
			// The runtime moved this goroutine to another thread: take
			// the priority there too.
			g.tid = tid
			setScheduler(0, int(sys.SchedFIFO), g.prio)
		}
		now := nanotime()
		stalled := now-next > g.tick
		for i := 0; i < len(g.table); {
			if g.check(&g.table[i], now, stalled) {
				i++
				continue
			}
			g.table[i].close()
			g.table[i] = g.table[len(g.table)-1]
			g.table = g.table[:len(g.table)-1]
		}
		next = g.nextLook(now)
	}
}

// maxTicksBetweenLooks bounds the guard's sleep, so that a command (a new
// watch) waits at most this many ticks.
const maxTicksBetweenLooks = 3

// nextLook is when the guard next looks at the threads: when the first
// stretch of a watched thread reaches its bound, a tick from now while a
// thread is demoted, at least a tick and at most maxTicksBetweenLooks
// ticks from now. A look between those can change nothing: a thread seen
// asleep or switched in again starts a new stretch at that look, and the
// switch-in count and voluntary switches tell the next look whether it
// slept meanwhile. Every look preempts a task on the guard's CPU
// (docs/GC.md, "The guard's looks").
func (g *guard) nextLook(now int64) int64 {
	next := now + maxTicksBetweenLooks*g.tick
	for i := range g.table {
		w := &g.table[i]
		if w.demoted {
			return now + g.tick
		}
		next = min(next, w.since+w.bound)
	}
	return max(next, now+g.tick)
}

// check looks at one thread; false when it is gone. stalled says the
// guard itself woke more than a tick after its look was due.
func (g *guard) check(w *watched, now int64, stalled bool) bool {
	ran, pcount, ok := g.readSchedstat(w.fd)
	if !ok {
		return false
	}
	state, ok := g.readState(w.stat)
	if !ok {
		return false
	}
	// Switched in again but runnable: preempted, or asleep in between.
	// Only the voluntary switches tell which (a spin's sched_yield and
	// the guard's own wake-ups on the spinner's CPU are involuntary).
	var nv uint64
	nvOK := false
	if !w.demoted && !stalled && pcount != w.pcount && state == 'R' {
		nv, nvOK = g.readVoluntary(w.status)
	}
	before := w.ran
	switch w.observe(ran, pcount, state, nv, nvOK, now, stalled) {
	case demote:
		if setScheduler(w.tid, int(sys.SchedOther), 0) != 0 {
			w.demoted = false
			break
		}
		g.send(record{op: evDemoted, tid: uint32(w.tid), value: int64(ran - before)})
	case restore:
		errno := setScheduler(w.tid, int(sys.SchedFIFO), w.prio)
		g.send(record{op: evRestored, tid: uint32(w.tid), arg: uint32(errno)})
		// A watchdog that faulted the thread meanwhile unwatched it
		// before demoting it for good: read that now, so that its
		// demotion is not undone. Reading it may move another thread
		// into w's slot, so the tid is taken first.
		tid := w.tid
		if !g.commands() {
			return true
		}
		if g.find(tid) < 0 {
			setScheduler(tid, int(sys.SchedOther), 0)
		}
	}
	return true
}

// action is what observe asks of the guard.
type action int

const (
	keep action = iota
	demote
	restore
)

// observe takes one look's reading of a thread and says what to do.
//
// A thread is a spinner when it was runnable at every look for its whole
// bound, never asleep (switched in again only after a preemption: nv,
// its voluntary switches, read as nvOK when it was switched in again),
// and on the CPU for some of it, however little: a spin, not a thread
// kept waiting by higher priorities. Spinners at one priority that yield
// to each other (the runtime's osyield) each get a share of the CPU, so
// any share counts; a thread the host keeps waiting is demoted too. A
// demoted thread gets its policy back once it was switched out, or after
// one more bound.
//
// The guard's own wake-ups preempt a spinner on its CPU at every look, so
// a switch-in alone does not end the stretch: with a 2-CPU machine and
// two spinning tasks, one of them always shares the guard's CPU.
//
// A stalled look (the guard woke late, so the whole machine or VM was
// held) vouches for nothing: the thread may have slept and woken in the
// gap without a new switch-in being seen as one, so the count restarts.
func (w *watched) observe(ran, pcount uint64, state byte, nv uint64, nvOK bool, now int64, stalled bool) action {
	awake := pcount == w.pcount || nvOK && w.nvKnown && nv == w.nv
	switch {
	case w.demoted:
		if pcount == w.pcount && now-w.demotedAt < w.bound {
			return keep // not yet switched out once
		}
		w.demoted, w.nvKnown = false, false
		w.pcount, w.since, w.ran = pcount, now, ran
		return restore
	case stalled:
	case awake && state == 'R' && now-w.since >= w.bound && ran > w.ran:
		w.demoted, w.demotedAt, w.nvKnown = true, now, false
		w.pcount, w.since, w.ran = pcount, now, ran
		return demote
	case awake && state == 'R':
		w.pcount = pcount
		return keep
	}
	w.pcount, w.since, w.ran = pcount, now, ran
	w.nv, w.nvKnown = nv, nvOK
	return keep
}

// commands reads what the parent sent; false at end of file (the parent
// closed the pipe or exited).
func (g *guard) commands() bool {
	for {
		n, _, errno := unix.RawSyscall(unix.SYS_READ, uintptr(g.in),
			uintptr(unsafe.Pointer(&g.cmd[g.cmdLen])), uintptr(len(g.cmd)-g.cmdLen))
		switch {
		case errno == unix.EINTR:
			continue
		case errno != 0:
			return true // EAGAIN: nothing more
		case n == 0:
			return false
		}
		g.cmdLen += int(n)
		done := 0
		for ; g.cmdLen-done >= recordSize; done += recordSize {
			g.apply(getRecord(g.cmd[done : done+recordSize]))
		}
		g.cmdLen = copy(g.cmd[:], g.cmd[done:g.cmdLen])
	}
}

func (g *guard) apply(c record) {
	tid := int(c.tid)
	switch c.op {
	case opWatch:
		if g.find(tid) >= 0 {
			return
		}
		if len(g.table) == maxWatched || c.value <= 0 || c.arg < 1 || c.arg > 99 || tid <= 0 {
			g.send(record{op: evRefused, tid: c.tid, arg: uint32(unix.EINVAL)})
			return
		}
		fd, err := unix.Open(fmt.Sprintf("/proc/%d/task/%d/schedstat", g.ppid, tid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			g.send(record{op: evRefused, tid: c.tid, arg: uint32(errnoOf(err))})
			return
		}
		stat, err := unix.Open(fmt.Sprintf("/proc/%d/task/%d/stat", g.ppid, tid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			unix.Close(fd)
			g.send(record{op: evRefused, tid: c.tid, arg: uint32(errnoOf(err))})
			return
		}
		status, err := unix.Open(fmt.Sprintf("/proc/%d/task/%d/status", g.ppid, tid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			unix.Close(fd)
			unix.Close(stat)
			g.send(record{op: evRefused, tid: c.tid, arg: uint32(errnoOf(err))})
			return
		}
		w := watched{tid: tid, prio: int(c.arg), bound: c.value, fd: fd, stat: stat, status: status, since: nanotime()}
		ran, pcount, ok := g.readSchedstat(fd)
		if !ok {
			w.close()
			g.send(record{op: evRefused, tid: c.tid, arg: uint32(unix.ESRCH)})
			return
		}
		w.ran, w.pcount = ran, pcount
		g.table = append(g.table, w)
	case opUnwatch:
		if i := g.find(tid); i >= 0 {
			g.table[i].close()
			g.table[i] = g.table[len(g.table)-1]
			g.table = g.table[:len(g.table)-1]
		}
	}
}

func (g *guard) find(tid int) int {
	for i := range g.table {
		if g.table[i].tid == tid {
			return i
		}
	}
	return -1
}

// send writes one event; dropped if the parent is not reading.
func (g *guard) send(r record) {
	var b [recordSize]byte
	r.put(&b)
	unix.RawSyscall(unix.SYS_WRITE, uintptr(g.out), uintptr(unsafe.Pointer(&b[0])), recordSize)
}

func (w *watched) close() {
	unix.Close(w.fd)
	unix.Close(w.stat)
	unix.Close(w.status)
}

// readVoluntary reads the voluntary_ctxt_switches of a status file.
func (g *guard) readVoluntary(fd int) (uint64, bool) {
	return parseVoluntary(rawPread(fd, g.status[:]))
}

// rawPread reads fd from its start into b with a raw system call; it
// returns what it read, nil on an error or at end of file.
func rawPread(fd int, b []byte) []byte {
	n, _, errno := unix.RawSyscall6(unix.SYS_PREAD64, uintptr(fd),
		uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), 0, 0, 0)
	if errno != 0 {
		return nil
	}
	return b[:n]
}

var voluntaryKey = []byte("\nvoluntary_ctxt_switches:")

// parseVoluntary finds "voluntary_ctxt_switches:" at the start of a line
// of a status file (not the nonvoluntary one) and parses its count.
func parseVoluntary(b []byte) (uint64, bool) {
	i := bytes.Index(b, voluntaryKey)
	if i < 0 {
		return 0, false
	}
	i += len(voluntaryKey)
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	var v uint64
	start := i
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if v > (1<<64-1)/10-1 {
			return 0, false
		}
		v = v*10 + uint64(b[i]-'0')
	}
	return v, i > start
}

// readState reads the state letter of /proc/<pid>/task/<tid>/stat ('R':
// running or waiting for a CPU).
func (g *guard) readState(fd int) (byte, bool) {
	return parseState(rawPread(fd, g.stat[:]))
}

// parseState finds the state letter after the command name, which is in
// parentheses and may itself hold spaces and parentheses.
func parseState(b []byte) (byte, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) || b[i+1] != ' ' {
		return 0, false
	}
	return b[i+2], true
}

// readSchedstat reads "run_ns wait_ns pcount" of a thread.
func (g *guard) readSchedstat(fd int) (ran, pcount uint64, ok bool) {
	return parseSchedstat(rawPread(fd, g.buf[:]))
}

// parseSchedstat parses /proc/<pid>/task/<tid>/schedstat: the time on the
// CPU, the time waiting for it, and the number of times the thread was
// switched in.
func parseSchedstat(b []byte) (ran, pcount uint64, ok bool) {
	var f [3]uint64
	i := 0
	for k := range f {
		for i < len(b) && b[i] == ' ' {
			i++
		}
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			if f[k] > (1<<64-1)/10-1 {
				return 0, 0, false
			}
			f[k] = f[k]*10 + uint64(b[i]-'0')
			i++
		}
		if i == start {
			return 0, 0, false
		}
	}
	return f[0], f[2], true
}

func errnoOf(err error) unix.Errno {
	if e, ok := err.(unix.Errno); ok {
		return e
	}
	return unix.EIO
}

func setScheduler(tid int, policy, prio int) unix.Errno {
	param := struct{ priority int32 }{int32(prio)}
	_, _, errno := unix.RawSyscall(unix.SYS_SCHED_SETSCHEDULER, uintptr(tid), uintptr(policy), uintptr(unsafe.Pointer(&param)))
	return errno
}

// raiseOtherThreads sets every thread of this process but self to
// SCHED_FIFO at prio.
func raiseOtherThreads(self, prio int) {
	tids, _ := sys.Threads()
	for _, tid := range tids {
		if tid != self {
			setScheduler(tid, int(sys.SchedFIFO), prio)
		}
	}
}

func rawGettid() uintptr {
	tid, _, _ := unix.RawSyscall(unix.SYS_GETTID, 0, 0, 0)
	return tid
}

func rawGetppid() int {
	pid, _, _ := unix.RawSyscall(unix.SYS_GETPPID, 0, 0, 0)
	return int(pid)
}

func nanotime() int64 { return sys.Nanotime() }

// sleepUntil sleeps until the absolute CLOCK_MONOTONIC time deadline,
// without telling the runtime: the P stays with this goroutine.
func sleepUntil(deadline int64) {
	ts := sys.Timespec(deadline)
	for {
		_, _, errno := unix.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC,
			unix.TIMER_ABSTIME, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
		if errno != unix.EINTR {
			return
		}
	}
}
