package guard

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/sys"
)

// envKey marks a guard process; its value is "ppid,priority,tick-ns". Its
// descriptor 3 is the shared page of cycle counters (Slot).
const envKey = "GORTAPI_GUARD"

func init() {
	if v, ok := os.LookupEnv(envKey); ok {
		os.Exit(serve(v))
	}
}

// recordSize is the size of every command and event, under PIPE_BUF.
const recordSize = 32

// Commands, parent to guard.
const (
	opWatch   = 1 // tid, prio, slot, bound (0: no spin rule), timeout (0: no watchdog rule)
	opUnwatch = 2 // tid
)

// Events, guard to parent.
const (
	evReady    = 1 // prio set (errno 0) or refused (errno)
	evDemoted  = 2 // tid ran bound ns without a break; value = ns on CPU
	evRestored = 3 // tid has its policy back (errno if that failed)
	evRefused  = 4 // a watch the guard cannot take (errno)
	evFault    = 5 // tid is a runaway, demoted for good (errno if that failed); value = stalled ns, value2 = cycles
	evTick     = 6 // TickEvery passed
)

// record is a command or an event on the wire (little-endian).
type record struct {
	op     uint32
	tid    uint32
	arg    uint32
	slot   uint32
	value  int64
	value2 int64
}

func (r record) put(b *[recordSize]byte) {
	binary.LittleEndian.PutUint32(b[0:], r.op)
	binary.LittleEndian.PutUint32(b[4:], r.tid)
	binary.LittleEndian.PutUint32(b[8:], r.arg)
	binary.LittleEndian.PutUint32(b[12:], r.slot)
	binary.LittleEndian.PutUint64(b[16:], uint64(r.value))
	binary.LittleEndian.PutUint64(b[24:], uint64(r.value2))
}

func getRecord(b []byte) record {
	return record{
		op:     binary.LittleEndian.Uint32(b[0:]),
		tid:    binary.LittleEndian.Uint32(b[4:]),
		arg:    binary.LittleEndian.Uint32(b[8:]),
		slot:   binary.LittleEndian.Uint32(b[12:]),
		value:  int64(binary.LittleEndian.Uint64(b[16:])),
		value2: int64(binary.LittleEndian.Uint64(b[24:])),
	}
}

// maxWatched bounds the guard's table; a watch beyond it is refused.
const maxWatched = 1024

// watched is one guarded thread.
type watched struct {
	tid    int
	prio   int
	bound  int64
	fd     int    // its schedstat
	stat   int    // its stat
	status int    // its status, for the voluntary switches
	pcount uint64 // switch-ins at the last look
	since  int64  // start of the stretch runnable without a sleep
	ran    uint64 // CPU time at since
	// nv is the voluntary switches at since, when nvKnown: read once it
	// was switched in again while runnable (a spin on the guard's CPU).
	nv        uint64
	nvKnown   bool
	demoted   bool
	demotedAt int64
	// suspect: the last look found a spin, which the next confirms.
	suspect bool
	// The slot's count at the last progress (-1: no slot), when that was
	// and the thread's CPU time then (the watchdog rule: timeout > 0).
	slot          int
	timeout       int64
	lastCycles    int64
	lastProgress  int64
	cpuAtProgress uint64
}

type guard struct {
	ppid    int
	prio    int
	tick    int64
	tid     int
	in, out int // command and event descriptors: stdin and stdout
	table   []watched
	slots   []Slot // the parent's page: read, never trusted beyond a count
	ticked  int64  // when the last evTick went
	cmd     [recordSize * 64]byte
	cmdLen  int
	buf     [128]byte
	stat    [512]byte  // the start of a stat file: pid, (comm), state
	status  [4096]byte // a status file
	// (*sys.CPUAccounts).Read, nil for none; read at every tick into
	// reads, a ring, for the watchdog rule (stoppedSince)
	accounts func(into []sys.CPUAccount) ([]sys.CPUAccount, int64, error)
	reads    [stopReads]accountsRead
	nreads   int
	now      accountsRead // stoppedSince's read
}

// stopReads is how many ticks' reads of the CPUs' accounts the guard
// keeps: 0.8 s.
const stopReads = 8

// accountsRead is one read of sys.CPUAccounts.
type accountsRead struct {
	accts []sys.CPUAccount // nil: failed
	at    int64
}

// readAccounts reads the CPUs' accounts into r, reusing its slice.
func (g *guard) readAccounts(r *accountsRead) {
	if g.accounts == nil {
		r.accts = nil
		return
	}
	a, at, err := g.accounts(r.accts[:0])
	if err != nil {
		r.accts = nil
		return
	}
	r.accts, r.at = a, at
}

// stoppedSince is how long the CPUs took no tick while busy without a
// break, from the last tick's read at or before t (the oldest kept, if
// none) until now, in ns (sys.StoppedCPUTime): time a host stopped them,
// which counts as CPU time of the thread that ran there. It may include
// a stop up to a tick before t, or one on another CPU.
func (g *guard) stoppedSince(t int64) int64 {
	if g.nreads == 0 {
		return 0
	}
	oldest := max(g.nreads-stopReads, 0)
	from := &g.reads[oldest%stopReads]
	for i := g.nreads - 1; i >= oldest; i-- {
		if r := &g.reads[i%stopReads]; r.at <= t {
			from = r
			break
		}
	}
	g.readAccounts(&g.now)
	if from.accts == nil || g.now.accts == nil {
		return 0
	}
	return sys.StoppedCPUTime(from.accts, g.now.accts, from.at, g.now.at)
}

// serve runs the guard process and returns its exit status.
func serve(arg string) int {
	var ppid, prio int
	var tick int64
	parts := strings.Split(arg, ",")
	if len(parts) == 3 {
		ppid, _ = strconv.Atoi(parts[0])
		prio, _ = strconv.Atoi(parts[1])
		tick, _ = strconv.ParseInt(parts[2], 10, 64)
	}
	// A parent of PID 1 (a container's host) is fine: its exit kills us.
	if ppid < 1 || prio < 1 || prio > 99 || tick < 100_000 || tick > 1_000_000_000 {
		fmt.Fprintf(os.Stderr, "gortapi guard: bad %s=%q\n", envKey, arg)
		return 2
	}
	if os.Getppid() != ppid {
		return 0 // the process to guard is gone already
	}
	g := &guard{ppid: ppid, prio: prio, tick: tick, in: 0, out: 1, table: make([]watched, 0, maxWatched),
		accounts: sys.NewCPUAccounts().Read}
	// Opens the file and sizes its buffer and every read's slice.
	for i := range g.reads {
		g.reads[i].accts = make([]sys.CPUAccount, 0, runtime.NumCPU())
	}
	g.now.accts = make([]sys.CPUAccount, 0, runtime.NumCPU())
	g.readAccounts(&g.reads[0])
	g.nreads = 1
	page, err := unix.Mmap(3, 0, PageSize, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gortapi guard: map the cycle counters: %v\n", err)
		return 2
	}
	g.slots = slotsOf(page)
	// No page faults at the top priority (docs/GC.md, "Memory locked as
	// it is touched").
	_ = sys.LockMemory()
	_ = unix.SetNonblock(0, true)
	_ = unix.SetNonblock(1, true)
	g.tid = unix.Gettid()
	// Every thread runs at the priority, since the runtime may move the
	// loop to any (docs/GC.md, "The guard's own CPU and the guard's own
	// threads"); later threads inherit it.
	errno := sys.SetSchedulerRaw(0, sys.SchedFIFO, prio)
	raiseOtherThreads(g.tid, prio)
	g.send(record{op: evReady, arg: uint32(errno)})
	g.loop()
	return 0
}

// loop sleeps until nextLook, reads commands and checks every watched
// thread, until the parent closes the command pipe or exits.
func (g *guard) loop() {
	next := nanotime()
	for {
		sleepUntil(next)
		if !g.commands() || rawGetppid() != g.ppid {
			return
		}
		if tid := int(rawGettid()); tid != g.tid {
			// moved to another thread: take the priority there too
			g.tid = tid
			sys.SetSchedulerRaw(0, sys.SchedFIFO, g.prio)
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
		if now-g.ticked >= int64(TickEvery) {
			g.ticked = now
			g.readAccounts(&g.reads[g.nreads%stopReads])
			g.nreads++
			g.send(record{op: evTick})
		}
		next = g.nextLook(now)
	}
}

// maxTicksBetweenLooks bounds how long a command waits.
const maxTicksBetweenLooks = 3

// nextLook is when the first stretch can reach its bound, a tick from now
// while a thread is demoted, within [1, maxTicksBetweenLooks] ticks. Looks
// in between would change nothing and preempt a task (docs/GC.md, "The
// guard's looks").
func (g *guard) nextLook(now int64) int64 {
	next := now + maxTicksBetweenLooks*g.tick
	for i := range g.table {
		w := &g.table[i]
		if w.demoted || w.suspect {
			return now + g.tick
		}
		if w.bound > 0 {
			next = min(next, w.since+w.bound)
		}
	}
	return max(next, now+g.tick)
}

// check looks at one thread; false when it is gone. stalled: the guard
// woke over a tick late.
func (g *guard) check(w *watched, now int64, stalled bool) bool {
	ran, pcount, ok := g.readSchedstat(w.fd)
	if !ok {
		return false
	}
	if g.progressed(w, ran, pcount, now) {
		return true
	}
	state, ok := g.readState(w.stat)
	if !ok {
		return false
	}
	// Switched in again but runnable: preempted, or asleep in between;
	// only the voluntary switches tell which.
	var nv uint64
	nvOK := false
	if !w.demoted && !stalled && pcount != w.pcount && state == 'R' {
		nv, nvOK = g.readVoluntary(w.status)
	}
	if w.timeout > 0 && g.runaway(w, ran, now) {
		errno := setWatched(w.tid, sys.SchedOther, 0)
		g.send(record{op: evFault, tid: uint32(w.tid), arg: uint32(errno), value: now - w.lastProgress, value2: w.lastCycles})
		return false // demoted for good: off the table, never restored
	}
	if w.bound == 0 {
		return true
	}
	before := w.ran
	switch w.observe(ran, pcount, state, nv, nvOK, now, stalled) {
	case demote:
		if setWatched(w.tid, sys.SchedOther, 0) != 0 {
			w.demoted = false
			break
		}
		g.send(record{op: evDemoted, tid: uint32(w.tid), value: int64(ran - before)})
	case restore:
		errno := setWatched(w.tid, sys.SchedFIFO, w.prio)
		g.send(record{op: evRestored, tid: uint32(w.tid), arg: uint32(errno)})
		// A watchdog that faulted the thread, or a task that ended,
		// unwatched it before demoting it for good: read that now, not to
		// undo it, even when the parent has closed the pipe since.
		// commands may move another thread into w's slot, hence tid first.
		tid := w.tid
		g.commands()
		if g.find(tid) < 0 {
			setWatched(tid, sys.SchedOther, 0)
		}
	}
	return true
}

// progressed reports whether w's task completed a cycle since the last
// look (its slot's count moved), and then restarts the stretches of both
// rules at this look's schedstat reading (ran, pcount): a thread whose
// task completes cycles is neither spinning in the runtime nor a
// runaway, so its stat and status need not be read (docs/GC.md, "The
// guard's looks"). A demoted thread is not taken as progressing: its
// restore waits for a switch-out.
func (g *guard) progressed(w *watched, ran, pcount uint64, now int64) bool {
	if w.demoted || w.slot < 0 {
		return false
	}
	c := g.slots[w.slot].Cycles.Load()
	if c == w.lastCycles {
		return false
	}
	w.lastCycles, w.lastProgress, w.cpuAtProgress = c, now, ran
	w.pcount, w.since, w.ran, w.nvKnown = pcount, now, ran, false
	return true
}

// runaway applies the watchdog rule to w at one look: progress (a new
// count, or the task idle on purpose) restarts its stretch; a stretch
// over the timeout with the thread on its CPU for half of it is a runaway.
// The time CPUs were stopped meanwhile (stoppedSince) does not count as
// on its CPU: the rule is for a task that keeps its CPU, not one whose
// virtual CPU the host did not run.
func (g *guard) runaway(w *watched, ran uint64, now int64) bool {
	s := &g.slots[w.slot]
	if c := s.Cycles.Load(); c != w.lastCycles || s.Idle.Load() != 0 {
		w.lastCycles, w.lastProgress, w.cpuAtProgress = c, now, ran
		return false
	}
	if !Runaway(w.timeout, now-w.lastProgress, int64(ran), int64(w.cpuAtProgress)) {
		return false
	}
	stopped := g.stoppedSince(w.lastProgress)
	return Runaway(w.timeout, now-w.lastProgress, int64(ran)-stopped, int64(w.cpuAtProgress))
}

type action int

const (
	keep action = iota
	demote
	restore
)

// observe takes one look's reading of a thread and says what to do. A
// spinner was runnable at every look for its bound, never asleep (a
// switch-in after a preemption, such as the guard's own, does not count:
// nv did not grow), and on the CPU for a 64th of it or more (spinners
// yield to each other; a thread that ran a moment and then waited for
// the CPU is not spinning). Where the stretch began without a count of
// its voluntary switches (a look that saw its task progress reads none),
// a thread switched in again counts as never asleep when it was on its
// CPU for half the stretch or more: the guard's own look preempts a
// spinner on its CPU. The look that finds a spin only marks it suspect;
// the next, a tick later, demotes it if it has not slept meanwhile: CPU
// time includes the host's stops of the vCPU, which a sleeper caught in
// one has slept again by then. It gets its policy back once switched
// out, or after one more bound. A stalled look vouches for nothing: the
// stretch restarts.
func (w *watched) observe(ran, pcount uint64, state byte, nv uint64, nvOK bool, now int64, stalled bool) action {
	stretch := uint64(max(now-w.since, 0))
	awake := pcount == w.pcount || nvOK && w.nvKnown && nv == w.nv ||
		!w.nvKnown && ran >= w.ran+stretch/2
	switch {
	case w.demoted:
		if pcount == w.pcount && now-w.demotedAt < w.bound {
			return keep // not yet switched out once
		}
		w.demoted, w.nvKnown = false, false
		w.pcount, w.since, w.ran = pcount, now, ran
		return restore
	case stalled:
	case awake && state == 'R' && now-w.since >= w.bound && ran > w.ran+stretch/64:
		if !w.suspect {
			w.suspect = true
			return keep
		}
		w.suspect = false
		w.demoted, w.demotedAt, w.nvKnown = true, now, false
		w.pcount, w.since, w.ran = pcount, now, ran
		return demote
	case awake && state == 'R':
		w.pcount = pcount
		return keep
	}
	w.pcount, w.since, w.ran = pcount, now, ran
	w.nv, w.nvKnown = nv, nvOK
	w.suspect = false
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
		if len(g.table) == maxWatched || c.value < 0 || c.value2 < 0 || c.value == 0 && c.value2 == 0 ||
			c.value2 > 0 && int(c.slot) >= len(g.slots) || c.arg < 1 || c.arg > 99 || tid <= 0 {
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
		w := watched{tid: tid, prio: int(c.arg), bound: c.value, fd: fd, stat: stat, status: status, since: nanotime(),
			slot: int(c.slot), timeout: c.value2}
		ran, pcount, ok := g.readSchedstat(fd)
		if !ok {
			w.close()
			g.send(record{op: evRefused, tid: c.tid, arg: uint32(unix.ESRCH)})
			return
		}
		w.ran, w.pcount = ran, pcount
		w.lastProgress, w.cpuAtProgress = w.since, ran
		if w.slot < len(g.slots) {
			w.lastCycles = g.slots[w.slot].Cycles.Load()
		} else {
			w.slot = -1 // a spin rule alone needs none
		}
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

// rawPread reads fd from offset 0 into b; nil on an error or at EOF.
func rawPread(fd int, b []byte) []byte {
	n, _, errno := unix.RawSyscall6(unix.SYS_PREAD64, uintptr(fd),
		uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), 0, 0, 0)
	if errno != 0 {
		return nil
	}
	return b[:n]
}

var voluntaryKey = []byte("\nvoluntary_ctxt_switches:")

// parseVoluntary parses a status file's voluntary_ctxt_switches.
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

// readState reads a stat file's state letter ('R': running or runnable).
func (g *guard) readState(fd int) (byte, bool) {
	return parseState(rawPread(fd, g.stat[:]))
}

// parseState finds the state letter after the (comm), which may itself
// hold spaces and parentheses.
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

// parseSchedstat parses a schedstat file: run_ns wait_ns pcount.
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

// setWatched sets a watched thread's policy reset on fork, as its
// process set it (sys.SetScheduler): without CAP_SYS_NICE a change that
// would clear the flag is refused.
func setWatched(tid int, policy sys.Policy, prio int) unix.Errno {
	return sys.SetSchedulerRaw(tid, policy|sys.ResetOnFork, prio)
}

// raiseOtherThreads sets every other thread to SCHED_FIFO at prio.
func raiseOtherThreads(self, prio int) {
	tids, _ := sys.Threads()
	for _, tid := range tids {
		if tid != self {
			sys.SetSchedulerRaw(tid, sys.SchedFIFO, prio)
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

// sleepUntil sleeps until the absolute deadline, keeping the P.
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
