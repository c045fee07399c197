package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
	"github.com/gortapi/gortapi/rtapi/hist"
	"github.com/gortapi/gortapi/rtapi/latencyfile"
)

// The set group (issue 19): a task set in one gortapi process against
// the same periods and priorities as C threads, one cyclictest process
// per period (cyclictest's -h forces all its threads to one interval).

// setTask is one task of a set: its name, period and SCHED_FIFO priority.
type setTask struct {
	name     string
	period   time.Duration
	priority int
}

// The task set and halhost's two HAL threads (examples/halhost
// defaults), with the priorities the issue gives.
var (
	threeSet = []setTask{{"50µs", 50 * time.Microsecond, 80}, {"550µs", 550 * time.Microsecond, 79}, {"1050µs", 1050 * time.Microsecond, 78}}
	halSet   = []setTask{{"base", 100 * time.Microsecond, 80}, {"servo", time.Millisecond, 79}}
)

const (
	// setHistBound is the histogram bound of both sides (cyclictest -h
	// in µs): past stallThreshold, so wake-ups over it are counted.
	setHistBound = 50 * time.Millisecond
)

// Row names of the set group.
const (
	rowSetGortapi   = "gortapi"
	rowSetAlloc     = "gortapi +alloc"
	rowSetSpinOff   = "gortapi, spin guard off"
	rowSetSpareOff  = "gortapi, spare Ps off"
	rowAllocSpareOf = "gortapi +alloc, spare Ps off"
	rowSetCyclic    = "cyclictest ×3"
	rowHALGortapi   = "gortapi HAL host"
	rowHALCyclictst = "cyclictest ×2"
)

// threadsSpec is a set as latency.ParseThreads reads it: the tasks
// named t0, t1, ... so that any name of setTask fits.
func threadsSpec(set []setTask) string {
	parts := make([]string, len(set))
	for i, t := range set {
		parts[i] = fmt.Sprintf("t%d=%dns", i, t.period.Nanoseconds())
	}
	return strings.Join(parts, ",")
}

func setNames(set []setTask) []string {
	names := make([]string, len(set))
	for i, t := range set {
		names[i] = t.name
	}
	return names
}

// setGroup is the 3-task set (quiet, with allocation, spin guard off) and
// halhost's threads, each against cyclictest processes.
func setGroup(b *bench) group {
	allocLoad := "alloc=" + b.s.alloc
	gortapiSet := func(spinOff, spareOff bool, loads []string) func() (childResult, error) {
		return b.gortapiSet(b.s.setDuration, spinOff, spareOff, loads)
	}
	halHost := withMissed(halSet, func() (childResult, error) {
		return b.childRaw(childSpec{Kind: "halhost", Flavor: "rt-preempt", CPU: b.s.cpu, Threads: threadsSpec(halSet),
			Priority: halSet[0].priority, Duration: b.s.setDuration, HistBound: setHistBound})
	})
	cyclicSet := func(name string, set []setTask) variant {
		v := variant{name: name, external: true, tasks: setNames(set), run: b.cyclictestSet(set, b.s.setDuration)}
		if b.tools.cyclictest == "" {
			v.skip = "cyclictest not installed"
		}
		return v
	}
	variants := []variant{
		{name: rowSetGortapi, tasks: setNames(threeSet), run: gortapiSet(false, false, nil)},
		cyclicSet(rowSetCyclic, threeSet),
		{name: rowSetAlloc, tasks: setNames(threeSet), run: gortapiSet(false, false, []string{allocLoad})},
	}
	offRows := "The rows with the runtime guard's steps off run only unpinned (-cpu -1): with every task on one CPU " +
		"they livelock on Go 1.26 (a task spinning in exitsyscall on the scan bit sysmon holds, docs/GC.md). "
	if b.s.cpu < 0 {
		variants = append(variants,
			variant{name: rowSetSpareOff, tasks: setNames(threeSet), run: gortapiSet(false, true, nil)},
			variant{name: rowAllocSpareOf, tasks: setNames(threeSet), run: gortapiSet(false, true, []string{allocLoad})},
			variant{name: rowSetSpinOff, tasks: setNames(threeSet), run: gortapiSet(true, false, nil)})
		offRows = ""
	}
	var ratios []ratioSpec
	for _, t := range threeSet {
		for _, v := range variants {
			if !v.external {
				ratios = append(ratios, ratioSpec{v.name + " / C · " + t.name, v.name + " · " + t.name, rowSetCyclic + " · " + t.name})
			}
		}
	}
	for _, t := range halSet {
		ratios = append(ratios, ratioSpec{"HAL host / C · " + t.name, rowHALGortapi + " · " + t.name, rowHALCyclictst + " · " + t.name})
	}
	return group{
		id: "set", title: "A task set in one process vs C threads (issue 19)", metric: "set", needFIFO: true,
		desc: fmt.Sprintf("Tasks at 50, 550 and 1050 µs, SCHED_FIFO priorities 80, 79, 78, memory locked, %s, in one "+
			"gortapi process (rt-preempt flavor, Skip overruns), as `latency-test -m -p 80 -t 3 -i 50` runs them: quiet, "+
			"with %s allocating in the same process, each also with the runtime guard off (RTAPI_RUNTIME_GUARD=off: no "+
			"P per task, no raw sleep, no spin bound), and quiet with it off. "+
			"The C reference is three cyclictest processes started together, each `cyclictest -m -p P -i I -t 1 -h %d -q -D D` "+
			"(its -h forces all its threads to one interval). Then halhost's two HAL threads (base 100 µs, servo 1 ms, "+
			"priorities 80 and 79, siggen on the servo thread) in an rtapi/hal host against two cyclictest processes. "+
			"Missed releases come from the histogram on both sides (a wake-up L late skips ⌊L / period⌋ releases); "+
			"the worst round is the largest max of any round; over %v counts wake-ups later than issue 19's goal 0 allows, "+
			"summed over the rounds. %s%d rounds of %v (-rounds, -d).", setPlacement(b.s.cpu), allocLoad, setHistBound/time.Microsecond,
			stallThreshold, offRows, b.s.setRounds, b.s.setDuration),
		variants: append(variants,
			variant{name: rowHALGortapi, tasks: setNames(halSet), run: halHost},
			cyclicSet(rowHALCyclictst, halSet)),
		ratios: ratios, rounds: b.s.setRounds,
	}
}

// gortapiSet runs the 3-task set for d in one gortapi child.
func (b *bench) gortapiSet(d time.Duration, spinOff, spareOff bool, loads []string) func() (childResult, error) {
	return withMissed(threeSet, func() (childResult, error) {
		return b.childRaw(b.setSpec(d, spinOff, spareOff, loads))
	})
}

// setSpec is the gortapi child of the 3-task set, its tasks on the CPU
// its C reference is pinned to (setPlacement).
func (b *bench) setSpec(d time.Duration, spinOff, spareOff bool, loads []string) childSpec {
	return childSpec{Kind: "gortapi", Flavor: "rt-preempt", Wake: "nanosleep", CPU: b.s.cpu,
		Threads: threadsSpec(threeSet), Priority: threeSet[0].priority, Duration: d,
		HistBound: setHistBound, SpinGuardOff: spinOff, SpareProcsOff: spareOff, Loads: loads}
}

// cyclictestSet runs one cyclictest process per task of set for d, on
// the CPU of the gortapi side (-cpu).
func (b *bench) cyclictestSet(set []setTask, d time.Duration) func() (childResult, error) {
	return withMissed(set, func() (childResult, error) {
		return runCyclictestSet(b.tools, b.dir, set, d, b.s.cpu)
	})
}

// setPlacement says where both sides of a set comparison run their
// threads. cyclictest 2 pins each of its threads even without -a (thread
// N to the Nth CPU it may use), so one cyclictest process per task puts
// every C thread on the first CPU; the sets therefore pin both sides to
// one CPU (-cpu), as LinuxCNC's rtapi_app does with every real-time thread.
func setPlacement(cpu int) string {
	if cpu < 0 {
		return "gortapi's tasks unpinned (-cpu -1) while cyclictest pins each of its threads to the first CPU it may use " +
			"(its default since version 2), so the sides are not placed alike"
	}
	return fmt.Sprintf("every task of both sides pinned to CPU %d (-cpu; cyclictest -a %d), as LinuxCNC's rtapi_app puts "+
		"every real-time thread on one CPU", cpu, cpu)
}

// setCPUGroup is the 3-task set and its C reference beside two
// SCHED_OTHER CPU hogs (`stress-ng --cpu 2`, or a child of this program
// spinning on two CPUs), the third condition of issue 19's goal 0.
func setCPUGroup(b *bench) group {
	g := setGroup(b)
	var keep []variant
	for _, v := range g.variants {
		if v.name == rowSetGortapi || v.name == rowSetSpareOff || v.name == rowSetCyclic {
			keep = append(keep, v)
		}
	}
	var ratios []ratioSpec
	for _, r := range g.ratios {
		if strings.HasPrefix(r.label, rowSetGortapi+" / C") || strings.HasPrefix(r.label, rowSetSpareOff+" / C") {
			ratios = append(ratios, r)
		}
	}
	return group{
		id: "setcpu", title: "The task set beside two CPU hogs (issue 19, goal 0)", metric: "set", needFIFO: true,
		load: func(b *bench) (*background, error) { return startCPUHogs(b.tools) },
		desc: fmt.Sprintf("The set group's 3-task set and three cyclictest processes, alternating, while two SCHED_OTHER "+
			"CPU hogs run in another process (`stress-ng --cpu 2`, or this program's own cpu=2 load without stress-ng). "+
			"%d rounds of %v (-rounds, -d).", b.s.setRounds, b.s.setDuration),
		variants: keep, ratios: ratios, rounds: b.s.setRounds,
	}
}

// startCPUHogs starts two SCHED_OTHER CPU hogs in another process.
func startCPUHogs(t *tools) (*background, error) {
	if t.stressNG != "" {
		return startBackground(exec.Command(t.stressNG, "--cpu", "2", "--quiet"), "stress-ng --cpu 2")
	}
	return startLoadChild([]string{"cpu=2"})
}

// withMissed sets each task's period (from set, in order) and its
// overruns to the releases its histogram says it missed, as for C.
func withMissed(set []setTask, run func() (childResult, error)) func() (childResult, error) {
	return func() (childResult, error) {
		r, err := run()
		if err != nil {
			return r, err
		}
		if len(r.Tasks) != len(set) {
			return r, fmt.Errorf("%d tasks reported, want %d", len(r.Tasks), len(set))
		}
		for i := range r.Tasks {
			r.Tasks[i].Period = set[i].period
			r.Tasks[i].Overruns = missedReleases(r.Tasks[i].Latency, set[i].period)
		}
		return r, nil
	}
}

// cyclictestSetArgs is the command line of the cyclictest process that
// stands for task t, pinned to cpu (none: -1, where cyclictest 2 still
// pins its thread to the first CPU it may use).
func cyclictestSetArgs(t setTask, d time.Duration, histFile string, cpu int) []string {
	args := []string{"-m", "-p", strconv.Itoa(t.priority), "-i", strconv.Itoa(int(t.period / time.Microsecond)),
		"-t", "1", "-h", strconv.Itoa(int(setHistBound / time.Microsecond)), "-q", "-D", strconv.Itoa(seconds(d)),
		"--histfile=" + histFile}
	if cpu >= 0 {
		args = append(args, "-a", strconv.Itoa(cpu))
	}
	return args
}

// runCyclictestSet starts one cyclictest process per task at the same
// time, each pinned to cpu (-1: cyclictest's default), waits for all of
// them and reads each one's histogram.
func runCyclictestSet(t *tools, dir string, set []setTask, d time.Duration, cpu int) (childResult, error) {
	type out struct {
		h   hist.Snapshot
		err error
	}
	outs := make([]out, len(set))
	var wg sync.WaitGroup
	for i, task := range set {
		histFile := filepath.Join(dir, fmt.Sprintf("cyclictest-set-%d.hist", i))
		os.Remove(histFile)
		args := cyclictestSetArgs(task, d, histFile, cpu)
		wg.Add(1)
		go func() {
			defer wg.Done()
			o, err := runTool(d, t.cyclictest, args...)
			if err != nil {
				outs[i].err = fmt.Errorf("cyclictest %s: %w: %s", strings.Join(args, " "), err, lastLine(o))
				return
			}
			outs[i].h, outs[i].err = readHistfile(histFile)
		}()
	}
	wg.Wait()
	r := childResult{Policy: "SCHED_FIFO", Wake: "nanosleep", Flavor: "cyclictest"}
	for i, o := range outs {
		if o.err != nil {
			return childResult{}, o.err
		}
		r.Tasks = append(r.Tasks, taskResult{Name: set[i].name, Period: set[i].period, Latency: o.h, Cycles: o.h.Count})
		r.Cycles += o.h.Count
	}
	return r, nil
}

// readHistfile reads the one thread of a cyclictest -t 1 histogram file.
func readHistfile(name string) (hist.Snapshot, error) {
	f, err := os.Open(name)
	if err != nil {
		return hist.Snapshot{}, fmt.Errorf("cyclictest wrote no histogram: %w", err)
	}
	defer f.Close()
	hs, err := latencyfile.ReadHistfile(f)
	if err != nil {
		return hist.Snapshot{}, fmt.Errorf("cyclictest histogram %s: %w", filepath.Base(name), err)
	}
	if len(hs) != 1 {
		return hist.Snapshot{}, fmt.Errorf("cyclictest histogram %s: %d threads, want 1", filepath.Base(name), len(hs))
	}
	return hs[0], nil
}

// childHALHost runs an rtapi/hal host with spec.Threads as HAL threads
// (priorities from spec.Priority down), siggen on the slowest (or
// spec.HAL, then spec.EmptyFuncts), for spec.Duration, and reports each
// thread's wake-up latency and the values of spec.Pins.
func childHALHost(spec childSpec) (childResult, error) {
	var specs []hal.ThreadSpec
	names := strings.Split(spec.Threads, ",")
	for i, item := range names {
		name, period, _ := strings.Cut(item, "=")
		d, err := time.ParseDuration(period)
		if err != nil {
			return childResult{}, fmt.Errorf("halhost thread %q: %w", item, err)
		}
		names[i] = name
		specs = append(specs, hal.ThreadSpec{Name: name, Period: d, Priority: spec.Priority - i})
	}
	text := "loadrt siggen\naddf siggen.0.update " + names[len(names)-1] + "\n"
	if spec.HAL != "" || len(spec.EmptyFuncts) > 0 {
		text = spec.HAL
	}
	x, err := openHAL(rtapi.Options{Flavor: spec.Flavor, HistogramBound: spec.HistBound}, specs, text)
	if err != nil {
		return childResult{}, err
	}
	defer x.close()
	h, threads := x.h, x.threads
	if err := addEmptyFuncts(h, spec.EmptyFuncts); err != nil {
		return childResult{}, err
	}
	if err := h.Start(); err != nil {
		return childResult{}, err
	}
	minutes, err := sampleSlices(threads, spec.Duration, spec.Slice)
	if err != nil {
		return childResult{}, errors.Join(err, h.Stop())
	}
	r := childResult{Flavor: x.rt.Flavor().Name}
	for i, th := range threads {
		st := th.Task().Stats()
		r.Tasks = append(r.Tasks, taskResult{Name: names[i], Period: th.Period(), Latency: st.Latency,
			Cycles: st.Cycles, Overruns: st.Overruns, Interference: st.Interference, Minutes: minutes[i]})
		r.Policy, r.Wake = st.Policy, st.Wake
		r.Cycles += st.Cycles
	}
	if err := h.Stop(); err != nil {
		return childResult{}, err
	}
	for _, name := range spec.Pins {
		v, err := h.GetP(name)
		if err != nil {
			return childResult{}, err
		}
		if r.Pins == nil {
			r.Pins = make(map[string]string)
		}
		r.Pins[name] = v
	}
	return r, nil
}

// halHost is an RT and a HAL in a /dev/shm directory of their own
// (tmpfs: no writeback under the threads), for the HAL groups' children.
type halHost struct {
	rt      *rtapi.RT
	dir     string
	h       *hal.HAL
	threads []*hal.Thread
}

// openHAL opens an RT with opts and a HAL with threads, and loads text
// into it (its threads exist; it starts nothing).
func openHAL(opts rtapi.Options, threads []hal.ThreadSpec, text string) (x *halHost, err error) {
	x = &halHost{}
	defer func() {
		if err != nil {
			x.close()
		}
	}()
	if x.rt, err = rtapi.Open(opts); err != nil {
		return nil, err
	}
	if x.dir, err = os.MkdirTemp("/dev/shm", "latency-bench-hal-"); err != nil {
		return nil, err
	}
	if x.h, err = hal.New(x.rt, hal.Options{ShmDir: x.dir}); err != nil {
		return nil, err
	}
	for _, ts := range threads {
		th, err := x.h.NewThreadSpec(ts)
		if err != nil {
			return nil, err
		}
		x.threads = append(x.threads, th)
	}
	cmds, err := halfile.Parse("latency-bench.hal", strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	if err = x.h.Load(io.Discard, cmds); err != nil {
		return nil, err
	}
	return x, nil
}

// close closes what openHAL opened, the HAL first.
func (x *halHost) close() {
	if x.h != nil {
		x.h.Close()
	}
	if x.dir != "" {
		os.RemoveAll(x.dir)
	}
	if x.rt != nil {
		x.rt.Close()
	}
}

// addEmptyFuncts exports n empty functions for each thread of n and
// adds them at its end, named empty.THREAD.I.
func addEmptyFuncts(h *hal.HAL, n map[string]int) error {
	for thread, k := range n {
		for i := range k {
			name := fmt.Sprintf("empty.%s.%d", thread, i)
			if _, err := h.Export(name, func(time.Duration, int64) {}); err != nil {
				return err
			}
			if err := h.AddFunct(name, thread, hal.Last); err != nil {
				return err
			}
		}
	}
	return nil
}

// sampleSlices waits d while the threads run and, when slice is
// positive, returns each thread's figures over every slice of it (the
// last one may be shorter).
func sampleSlices(threads []*hal.Thread, d, slice time.Duration) ([][]sliceFigures, error) {
	out := make([][]sliceFigures, len(threads))
	if slice <= 0 {
		time.Sleep(d) // the parent's clock, not a real-time path
		return out, nil
	}
	last := make([]hist.Snapshot, len(threads))
	stops := newStopMeter()
	defer stops.close()
	for done := time.Duration(0); done < d; done += slice {
		time.Sleep(min(slice, d-done)) // the parent's clock, not a real-time path
		stopped := stops.next()
		for i, th := range threads {
			now := th.Task().Stats().Latency
			in, err := now.Sub(last[i])
			if err != nil {
				return nil, err
			}
			f := figuresOf(in)
			f.Stopped = stopped
			out[i] = append(out[i], f)
			last[i] = now
		}
	}
	return out, nil
}

// setGoals are issue 19's targets for the set group: each task's max
// and p99.9 at most 1.5 × C's (medians over the rounds), quiet and with
// allocation, and no gortapi wake-up later than 20 ms.
func setGoals(res results) []goalResult {
	out := setGoalsOf(res, "set")
	return append(out, setGoalsOf(res, "setcpu")...)
}

func setGoalsOf(res results, id string) []goalResult {
	g := findGroup(res, id)
	if g == nil || g.Skipped != "" {
		return nil
	}
	var out []goalResult
	add := func(goal string, measured, limit float64, ok bool, unit, detail string) {
		r := goalResult{Goal: goal, Limit: limit, Unit: unit, Detail: detail}
		if !ok {
			r.Note = "not measured"
		} else {
			r.Measured, r.Met = measured, measured <= limit
		}
		out = append(out, r)
	}
	where := "set"
	if id == "setcpu" {
		where = "set beside 2 CPU hogs"
	}
	for _, num := range []string{rowSetGortapi, rowSetAlloc} {
		if id == "setcpu" && num != rowSetGortapi {
			continue
		}
		for _, t := range threeSet {
			r := findRatio(g, num+" / C · "+t.name)
			var p999, mx float64
			if r != nil {
				p999, mx = r.P999, r.Max
			}
			add(fmt.Sprintf("%s, %s, %s task: p99.9 ≤ 1.5 × C", where, num, t.name), p999, 1.5, r != nil && r.P999 > 0, "", "")
			add(fmt.Sprintf("%s, %s, %s task: max ≤ 1.5 × C", where, num, t.name), mx, 1.5, r != nil && r.Max > 0, "",
				canaryMaxDetail(g, num+" · "+t.name, rowSetCyclic+" · "+t.name))
		}
	}
	var over, cOver int64
	known, cKnown := false, false
	for _, r := range g.Rows {
		if r.Over20ms == nil {
			continue
		}
		if r.External {
			cOver, cKnown = cOver+*r.Over20ms, true
		} else {
			over, known = over+*r.Over20ms, true
		}
	}
	detail := ""
	if cKnown {
		detail = fmt.Sprintf("C: %d", cOver)
	}
	add(where+": gortapi wake-ups later than 20 ms (goal 0: none)", float64(over), 0, known, "wake-ups", detail)
	return out
}
