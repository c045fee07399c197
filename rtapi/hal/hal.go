package hal

import (
	"cmp"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// Limits, which size the shared-memory records even when not publishing.
const (
	// NameLen bounds names to NameLen-1 bytes (LinuxCNC's HAL_NAME_LEN: 47).
	NameLen = 48
	// MaxThreads is the most threads one HAL runs.
	MaxThreads = 8
	// MaxFuncts is the most functions one thread calls.
	MaxFuncts = 64
	// MaxExported is the most functions one HAL exports.
	MaxExported = 256
)

// DefaultPublishEvery spaces publications when PublishEvery is 0.
const DefaultPublishEvery = time.Millisecond

// Options configure New. The zero value works and publishes nothing.
type Options struct {
	// StatsKey, when non-zero, makes New create the stats segment
	// "/gortapi-<rt.Instance()>-<key as 8 hex digits>", where threads
	// publish their timing for OpenView. Close removes it. One left by
	// a dead host is replaced; one whose host still runs is an error.
	StatsKey uint32
	// ShmDir is the directory segments live in; "" means /dev/shm.
	ShmDir string
	// ShmGroup (a name or numeric gid) makes the data and stats
	// segments mode 0640 of that group instead of 0600, for viewers run
	// by other users (ViewOptions.Group), and the segments of
	// Component.NewSegment 0660. Empty: the RT's (rtapi.RT.ShmGroup).
	ShmGroup string
	// DataKey, when non-zero, puts components, pins, parameters and
	// signals in the shared segment "/gortapi-<instance>-<key>" for other
	// processes (examples/halcmd); zero keeps them private. Close removes
	// it; StatsKey's rules apply to one left behind. Linux only.
	DataKey uint32
	// PublishEvery spaces a thread's publications: every
	// max(1, PublishEvery/period) cycles. Zero: 1 ms.
	PublishEvery time.Duration
	// StopTimeout bounds Stop's and RemoveFunct's wait; 0: rt.StopTimeout().
	StopTimeout time.Duration
}

// HAL is a set of threads and the functions exported to them, on one
// rtapi.RT. Call its methods from ordinary goroutines, never from a Func;
// they are safe for concurrent use.
type HAL struct {
	rt   *rtapi.RT
	opts Options
	log  *zap.Logger
	pub  *publisher     // nil unless Options.StatsKey
	data *dataStore     // the data tables: shared with DataKey, else private
	segs []*shm.Segment // made by Component.NewSegment, guarded by mu

	loadMu sync.Mutex // held by LoadRT, which undoes a refused load (registry.go)

	mu      sync.Mutex
	threads []*Thread         // creation order
	functs  map[string]*Funct // exported functions by name
	order   []*Funct          // exported functions in export order
	base    time.Duration     // the first thread's period
	gen     uint64            // last chain generation handed out
	running bool
	closed  bool

	// The data model, guarded by mu (data.go). The lists are slot
	// tables: nil in a free slot.
	comps   []*Component // a removed one (Component.Remove) keeps its slot until reused
	born    uint64       // components made so far: Component.born
	lastID  int          // the last component id given (compid.go)
	pins    map[string]*pin
	pinList []*pin
	params  map[string]*param
	parList []*param
	sigs    map[string]*Signal
	sigList []*Signal
	loaded  [][]string // loadrt lines, for Save
	modules []*module  // what each accepted loadrt made, for unloadrt (unload.go)
	safeSeq uint64     // safe states registered so far (safe.go)

	ownComps map[*Component]bool // the HAL's pseudo components (times.go); guarded by mu

	dataRepaired bool // the lost data segment's tables were rewritten (repairData); guarded by mu

	// halcmd's lock and alias verbs (exec.go, exec_alias.go), guarded by mu.
	lock    uint8             // LinuxCNC's HAL_LOCK_* bits
	aliases map[string]string // alias → the pin's or parameter's name
	aliasOf map[string]string // pin or parameter name → its alias

	// Changes of links while threads run (links.go).
	gate      atomic.Uint64 // threads inside a cycle, and the change armed
	pending   atomic.Pointer[linkChange]
	ops       []linkOp // collected by setRef; guarded by mu
	changeGen uint32   // guarded by mu
}

// New makes a HAL on rt, with the stats segment if StatsKey. A nil rt panics.
func New(rt *rtapi.RT, opts Options) (*HAL, error) {
	if rt == nil {
		panic("hal: New called with a nil *rtapi.RT")
	}
	if opts.PublishEvery < 0 {
		return nil, errf("new", "", "", rtapi.ErrInvalid, "negative PublishEvery %v", opts.PublishEvery)
	}
	if opts.StopTimeout < 0 {
		return nil, errf("new", "", "", rtapi.ErrInvalid, "negative StopTimeout %v", opts.StopTimeout)
	}
	if opts.PublishEvery == 0 {
		opts.PublishEvery = DefaultPublishEvery
	}
	opts.ShmGroup = cmp.Or(opts.ShmGroup, rt.ShmGroup())
	if opts.StopTimeout == 0 {
		opts.StopTimeout = rt.StopTimeout()
	}
	h := &HAL{rt: rt, opts: opts, log: rt.Logger(), functs: map[string]*Funct{},
		pins: map[string]*pin{}, params: map[string]*param{}, sigs: map[string]*Signal{}}
	// Mode 0640 of the group: members read, only the host writes
	// (HACKING.md, "One way into a running HAL").
	so := shm.Options{Dir: opts.ShmDir, Instance: rt.Instance(), Prefault: true, Group: opts.ShmGroup}
	if opts.ShmGroup != "" {
		so.Mode = 0o640
	}
	data, err := newDataStore(so, opts.DataKey, h.log)
	if err != nil {
		return nil, &Error{Op: "new", Err: err}
	}
	h.data = data
	if opts.StatsKey != 0 {
		p, err := newPublisher(so, opts.StatsKey)
		if err != nil {
			_ = data.close()
			return nil, &Error{Op: "new", Err: err}
		}
		p.loss.log = h.log
		h.pub = p
	}
	return h, nil
}

// RT is the rtapi instance the threads run on.
func (h *HAL) RT() *rtapi.RT { return h.rt }

// ShmGroup is the group the HAL's segments are shared with
// (Options.ShmGroup, else the RT's), "" for none.
func (h *HAL) ShmGroup() string { return h.opts.ShmGroup }

// BasePeriod is the first thread's period (zero before the first thread).
func (h *HAL) BasePeriod() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.base
}

// StatsSegment is the stats segment's POSIX name ("" without StatsKey).
func (h *HAL) StatsSegment() string {
	if h.pub == nil {
		return ""
	}
	return h.pub.seg.Name()
}

// Threads lists the threads in creation order.
func (h *HAL) Threads() []*Thread {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.threads)
}

// Thread returns the thread named name.
func (h *HAL) Thread(name string) (*Thread, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	th := h.thread(name)
	return th, th != nil
}

func (h *HAL) thread(name string) *Thread {
	for _, th := range h.threads {
		if th.name == name {
			return th
		}
	}
	return nil
}

func (h *HAL) threadNames() []string {
	names := make([]string, len(h.threads))
	for i, th := range h.threads {
		names[i] = th.name
	}
	return names
}

// Running reports whether the threads were started and not stopped.
func (h *HAL) Running() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.running
}

// assignPriorities gives RateMonotonic threads rtapi's highest priority
// down, fastest (then earliest) first. Called with h.mu.
func (h *HAL) assignPriorities() {
	auto := make([]*Thread, 0, len(h.threads))
	for _, th := range h.threads {
		if th.spec.Priority != RateMonotonic {
			th.prio.Store(int64(th.spec.Priority))
			continue
		}
		auto = append(auto, th)
	}
	slices.SortStableFunc(auto, func(a, b *Thread) int { return cmp.Compare(a.period, b.period) })
	p := h.rt.PrioHighest()
	for i, th := range auto {
		if i > 0 {
			p = h.rt.PrioNextLower(p)
		}
		th.prio.Store(int64(p))
	}
}

// Start starts every thread (hal_start_threads), fastest first. Threads
// stopped before are started again with fresh tasks; their statistics
// carry on. If one fails to start, those already started are stopped
// again and the error is returned.
func (h *HAL) Start() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.closed:
		return &Error{Op: "start", Err: rtapi.ErrClosed}
	case h.running:
		return errf("start", "", "", rtapi.ErrState, "threads are already running")
	case len(h.threads) == 0:
		return errf("start", "", "", rtapi.ErrState, "no threads: create one with NewThread first")
	}
	h.assignPriorities()
	order := slices.Clone(h.threads)
	slices.SortStableFunc(order, func(a, b *Thread) int { return cmp.Compare(a.period, b.period) })
	for _, th := range order {
		if err := th.prepareTask(); err != nil {
			return err
		}
	}
	for i, th := range order {
		th.publishIdle(stateRunning)
		if err := th.task.Start(); err != nil {
			for _, o := range order[:i] {
				o.task.Stop()
			}
			for _, o := range order[:i] {
				_ = o.wait(h.opts.StopTimeout)
				o.publishIdle(stateStopped)
			}
			th.publishIdle(stateStopped)
			return &Error{Op: "start", Thread: th.name, Err: err}
		}
	}
	h.running = true
	h.log.Info("hal threads started", zap.Strings("threads", h.threadNames()), zap.Duration("base", h.base))
	return nil
}

// Stop stops every thread (hal_stop_threads) and waits for each, up to
// Options.StopTimeout; then no function is called. It returns the
// threads' errors: a *PanicError for a function that panicked,
// ErrTimeout for a thread that would not stop, whose safe states Stop
// then runs at once (docs/SAFETY.md). Stopped threads: no-op.
func (h *HAL) Stop() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stop()
}

func (h *HAL) stop() error {
	if !h.running {
		return nil
	}
	h.running = false
	for _, th := range h.threads {
		th.task.Stop()
	}
	var errs []error
	for _, th := range h.threads {
		err := th.wait(h.opts.StopTimeout)
		state := int64(stateStopped)
		var pe *PanicError
		if errors.As(err, &pe) || errors.Is(err, rtapi.ErrFaulted) || errors.Is(err, rtapi.ErrGoexit) {
			state = stateFailed
		}
		if err != nil {
			errs = append(errs, err)
		}
		if errors.Is(err, rtapi.ErrTimeout) {
			// A function never returns: make the outputs safe now, as
			// the watchdog would; the chain calls nothing more.
			th.runSafeStates()
		} else {
			th.publishIdle(state)
		}
	}
	h.log.Info("hal threads stopped", zap.Strings("threads", h.threadNames()))
	return errors.Join(errs...)
}

// Close stops the threads, deletes their tasks, runs the components'
// OnExit hooks and removes the stats and data segments and those of Component.NewSegment; a segment another
// process truncated is removed too, and Close returns shm.ErrTruncated.
// Later calls return nil; other methods return ErrClosed.
func (h *HAL) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	errs := []error{h.stop()}
	h.closed = true
	for _, th := range h.threads {
		if th.task != nil {
			if err := th.task.Delete(); err != nil && !errors.Is(err, rtapi.ErrClosed) {
				errs = append(errs, err)
			}
		}
	}
	h.runExit(nil)
	if h.pub != nil {
		errs = append(errs, h.pub.close())
	}
	for _, seg := range h.segs {
		errs = append(errs, seg.Delete())
	}
	errs = append(errs, h.data.close())
	return errors.Join(errs...)
}

// Stats returns a snapshot of every thread and its functions, in creation
// order, read from atomics while the threads run. It allocates.
func (h *HAL) Stats() []ThreadStats {
	out := make([]ThreadStats, 0, MaxThreads)
	for _, th := range h.Threads() {
		out = append(out, th.Stats())
	}
	return out
}

// wait waits for the thread's task to end, up to d, and returns its error.
func (th *Thread) wait(d time.Duration) error {
	t := th.task
	if t.State() == rtapi.TaskCreated {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-t.Done():
		return t.Wait()
	case <-timer.C:
		return errf("stop", th.name, "", rtapi.ErrTimeout,
			"did not stop within %v (a function never returns)", d)
	}
}

func (h *HAL) checkOpen(op, thread, funct string) error {
	if h.closed {
		return &Error{Op: op, Thread: thread, Funct: funct, Err: rtapi.ErrClosed}
	}
	return nil
}

// lockOpen takes h.mu on an open HAL; on a closed one it returns the
// error for op and leaves h.mu free.
func (h *HAL) lockOpen(op string) error {
	h.mu.Lock()
	if err := h.checkOpen(op, "", ""); err != nil {
		h.mu.Unlock()
		return err
	}
	return nil
}

// StatsErr returns a *shm.TruncatedError (shm.ErrTruncated) once another
// process truncated the stats segment; the threads run on, with counters
// in private memory only. nil while it publishes, and without StatsKey.
func (h *HAL) StatsErr() error {
	if h.pub == nil {
		return nil
	}
	return h.pub.err()
}

// DataErr returns a *shm.TruncatedError (shm.ErrTruncated) once another
// process truncated the data segment; the threads run on, with values in
// private memory only (zero past the file's new end). nil while it is
// shared, and without DataKey.
func (h *HAL) DataErr() error { return h.data.err() }
