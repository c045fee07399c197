package rtapi

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	_ "unsafe" // go:linkname

	"go.uber.org/zap"
)

// runtimeWriteBarrier is set by the runtime exactly while a GC cycle
// marks; its symbol and layout are kept for linkers (go.dev/issue/67401).
//
//go:linkname runtimeWriteBarrier runtime.writeBarrier
var runtimeWriteBarrier struct {
	enabled bool
	pad     [3]byte
	alignme uint64
}

// GCMarking reports whether a garbage-collection cycle of this process is
// in its mark phase right now: one byte load, no call into the runtime. A
// task body may use it to postpone optional work while the collector runs.
// RT-safe.
func GCMarking() bool { return runtimeWriteBarrier.enabled }

// The GC shield (TaskSpec.GCShield): HACKING.md, "Why a raw sleep keeps
// the P", has the design; docs/GC.md the measurements.

// shieldChoice resolves TaskSpec.GCShield: the task's own On or Off, else
// the instance's Options.GCShield.
func shieldChoice(spec TaskSpec, instance Toggle) Toggle {
	if spec.GCShield == Auto {
		return instance
	}
	return spec.GCShield
}

// shieldRaw reports whether the task wants raw sleeps (Auto: on real-time
// flavors).
func shieldRaw(spec TaskSpec, realTime bool, instance Toggle) bool {
	switch shieldChoice(spec, instance) {
	case On:
		return true
	case Off:
		return false
	}
	return realTime
}

// GCShieldMinPeriod is the shortest period GCShield Auto shields. A task
// with a shorter period keeps a P busy either way, so it counts against
// the Ps the shield hands out (docs/GC.md, "Several tasks").
const GCShieldMinPeriod = 500 * time.Microsecond

// taskShield is one task's part of its RT's shield board.
type taskShield struct {
	want   bool        // resolved at start: shieldRaw, nanosleep wake
	forced bool        // GCShield On on a nanosleep wait: never given up
	raw    atomic.Bool // the board's decision, read by the task once per cycle
	note   string      // Stats.GCShield; guarded by shieldBoard.mu
}

// shieldBoard hands out the Ps an RT's tasks may keep while they sleep.
type shieldBoard struct {
	mu      sync.Mutex
	members []*Task // running periodic tasks, in start order
	frozen  bool    // RT.Close has begun: tasks still leave, nothing is handed out
}

// freeze stops the board handing out Ps (RT.Close), so that a task ending
// first gives no P to one about to stop. Members still leave.
func (b *shieldBoard) freeze() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.frozen = true
}

// join adds t, if periodic, to the board and hands out the Ps again. It
// returns whether t sleeps raw in its first cycle.
func (b *shieldBoard) join(t *Task, wake WakeMode, logger *zap.Logger) bool {
	sh := &t.shield
	asked := shieldChoice(t.spec, t.rt.opts.GCShield) == On
	// Only a nanosleep wait can keep its P.
	sh.forced = asked && wake == WakeNanosleep
	sh.want = wake == WakeNanosleep && shieldRaw(t.spec, t.rt.info.RealTime, t.rt.opts.GCShield)
	b.mu.Lock()
	defer b.mu.Unlock()
	sh.note = shieldOffNote(t.spec, wake)
	if t.spec.Period == 0 {
		return false
	}
	if asked && !sh.forced {
		logger.Warn("GC shield", zap.String("task", t.spec.Name), zap.String("shield", sh.note))
	}
	if b.frozen {
		if sh.want {
			sh.note = "off: the RT was closing when the task started"
		}
		return false // Close stops it at once: not worth a P
	}
	b.members = append(b.members, t)
	b.assign(runtime.GOMAXPROCS(0), logger)
	return sh.raw.Load()
}

// leave takes t off the board and, unless frozen, gives its P to the next.
func (b *shieldBoard) leave(t *Task, logger *zap.Logger) {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := slices.Index(b.members, t)
	if i < 0 {
		return
	}
	b.members = slices.Delete(b.members, i, i+1)
	t.shield.raw.Store(false)
	if !b.frozen {
		b.assign(runtime.GOMAXPROCS(0), logger)
	}
}

// assign hands out the Ps (decideShields) and warns for each task that
// newly goes without the shield it wanted. Under b.mu.
func (b *shieldBoard) assign(procs int, logger *zap.Logger) {
	cands := make([]shieldCandidate, len(b.members))
	for i, t := range b.members {
		sh := &t.shield
		cands[i] = shieldCandidate{Period: t.spec.Period, Priority: t.spec.Priority, Want: sh.want, Forced: sh.forced,
			Stopping: t.ctl.Load()&ctlStop != 0, Raw: sh.raw.Load(), Note: sh.note}
	}
	for i, v := range decideShields(procs, cands) {
		t, sh := b.members[i], &b.members[i].shield
		sh.raw.Store(v.Raw)
		sh.note = v.Note
		if (v.Raw != cands[i].Raw || v.Note != cands[i].Note) && sh.want && v.Note != "on" {
			logger.Warn("GC shield", zap.String("task", t.spec.Name), zap.String("shield", v.Note))
		}
	}
}

// shieldCandidate is what the shield decision knows of one periodic task.
type shieldCandidate struct {
	Period   time.Duration
	Priority int
	Want     bool   // offered the shield: a nanosleep wait, GCShield resolved on
	Forced   bool   // GCShield On on a nanosleep wait: served regardless
	Stopping bool   // told to stop, not ended yet
	Raw      bool   // the decision it has now
	Note     string // Stats.GCShield now
}

// shieldVerdict is one task's decision: whether it sleeps raw, and what
// Stats.GCShield says.
type shieldVerdict struct {
	Raw  bool
	Note string
}

// decideShields returns, for each candidate (in start order), whether it
// keeps its P while it sleeps, with procs Ps; HACKING.md ("Why a raw
// sleep keeps the P") gives the order. A task told to stop keeps its
// decision and what it holds until it has ended.
func decideShields(procs int, cands []shieldCandidate) []shieldVerdict {
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int {
		x, y := &cands[i], &cands[j]
		switch {
		case x.Forced != y.Forced:
			if x.Forced {
				return -1
			}
			return 1
		case x.Period != y.Period:
			return cmp.Compare(x.Period, y.Period)
		}
		return cmp.Compare(y.Priority, x.Priority)
	})
	out := make([]shieldVerdict, len(cands))
	free := procs - 1 // Ps that may be held, leaving one for the rest
	forced, busy := 0, 0
	for _, i := range order {
		c := &cands[i]
		short := c.Period < GCShieldMinPeriod
		switch {
		case c.Stopping && c.Raw:
			free-- // keeps what it has until it ends
		case c.Stopping && !short:
			// holds nothing, and gets nothing now
		case c.Forced:
			forced++
		case short:
			busy++ // a fast task keeps its P busy, raw or not
		}
	}
	free -= busy
	for _, i := range order {
		c := &cands[i]
		v := shieldVerdict{Raw: c.Raw, Note: c.Note}
		switch {
		case c.Stopping:
			// about to end: not worth a P, and its Stats keep what it had
		case c.Forced:
			free-- // may go below zero: forced tasks are served regardless
			v = shieldVerdict{Raw: true, Note: "on"}
			if forced+busy > procs-1 {
				v.Note = fmt.Sprintf("on, forced; but %d forced tasks keep their P while they sleep and %d with periods under %v "+
					"keep one busy, with GOMAXPROCS %d: the rest of the program runs only when the Go runtime preempts one of them "+
					"(raise GOMAXPROCS or use GCShield Auto)", forced, busy, GCShieldMinPeriod, procs)
			}
		case !c.Want:
			v.Raw = false
		case c.Period < GCShieldMinPeriod:
			v = shieldVerdict{Note: fmt.Sprintf("off: period under %v (the Go runtime's forced preemption of a task that keeps its P, "+
				"every 10-20 ms, costs more than such a short sleep risks; GCShield On forces it)", GCShieldMinPeriod)}
		case free > 0:
			free--
			v = shieldVerdict{Raw: true, Note: "on"}
		default:
			v = shieldVerdict{Note: fmt.Sprintf("off: GOMAXPROCS %d, one P kept for the rest of the program, %d kept busy by tasks with "+
				"periods under %v, %d by forced ones; the rest went to shorter periods or higher priorities "+
				"(raise GOMAXPROCS to shield more)", procs, busy, GCShieldMinPeriod, forced)}
		}
		out[i] = v
	}
	return out
}

// shieldOffNote says why a task does not ask for the shield.
func shieldOffNote(spec TaskSpec, wake WakeMode) string {
	switch {
	case spec.Period == 0:
		return "off: not periodic"
	case wake != WakeNanosleep:
		return "off: only the nanosleep wake mode can keep its P, not " + wake.String()
	case spec.GCShield == Off:
		return "off: GCShield Off"
	}
	return "off: not a real-time flavor, or Options.GCShield Off (RTAPI_GC_SHIELD=off)"
}

// followShield makes the next sleep raw or not, as the board last decided.
// RT-safe.
func (tc *TaskContext) followShield() {
	if raw := tc.task.shield.raw.Load(); raw != tc.raw {
		tc.raw = raw
		tc.waker.SetRawSleep(raw)
	}
}

// shieldNote is what Stats.GCShield shows.
func (t *Task) shieldNote() string {
	t.rt.shields.mu.Lock()
	defer t.rt.shields.mu.Unlock()
	return t.shield.note
}
