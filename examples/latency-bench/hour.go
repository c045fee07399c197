package main

import (
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/rtapi/hist"
)

// The hour group (issue 39, part 3): a HAL host with LinuxCNC's three
// threads against one cyclictest process per thread with the same period
// and priority, each side for -d (an hour unless -d is given), one after
// the other, while another process allocates and stress-ng --cpu 1 runs.
// Every minute of each side is kept: each thread's p99, p99.9, max and
// wake-ups over 20 ms, so a stall of one side can be set against the
// same minute of the other.

// linuxcncSet is docs/BENCHMARKS.md's LinuxCNC-like set: base 50 µs,
// servo 1 ms, user 10 ms, at the set group's priorities (fastest
// highest, as LinuxCNC's threads get them).
var linuxcncSet = []setTask{{"base", 50 * time.Microsecond, 80}, {"servo", time.Millisecond, 79}, {"user", 10 * time.Millisecond, 78}}

// Row names of the hour group.
const (
	rowHourHAL = "gortapi HAL host"
	rowHourC   = "cyclictest ×3"
)

// hourSlice is the length of the slices each side's run is cut into.
const hourSlice = time.Minute

// hourHAL is the host's .hal file, what a LinuxCNC stepper machine runs:
// step pulses on the base thread; on the servo thread the position loop
// (siggen's sine as the command, pid, stepgen's rate and its position
// fed back); a slow signal generator on the user thread.
const hourHAL = `loadrt stepgen step_type=0 ctrl_type=v
loadrt siggen num_chan=2
loadrt pid names=pid.x
addf stepgen.make-pulses      base
addf siggen.0.update          servo
addf stepgen.capture-position servo
addf pid.x.do-pid-calcs       servo
addf stepgen.update-freq      servo
addf siggen.1.update          user
net pos-cmd siggen.0.sine        => pid.x.command
net pos-fb  stepgen.0.position-fb => pid.x.feedback
net vel-cmd pid.x.output         => stepgen.0.velocity-cmd
setp siggen.0.amplitude 2
setp siggen.0.frequency 0.5
setp stepgen.0.position-scale 1000
setp stepgen.0.maxvel 8
setp pid.x.Pgain 20
setp pid.x.FF1 1
setp pid.x.maxoutput 8
setp pid.x.enable TRUE
setp stepgen.0.enable TRUE
`

// sliceFigures are one thread's figures over one slice (a minute) of a
// long run.
type sliceFigures struct {
	Count    int64         `json:"count"`
	P99      time.Duration `json:"p99_ns"`
	P999     time.Duration `json:"p99_9_ns"`
	Max      time.Duration `json:"max_ns"`
	Over20ms int64         `json:"over_20ms"`
	// Stopped: how long the machine's CPUs took no tick while busy without
	// a break in the slice, summed over the CPUs (stopMeter): a host that
	// stopped them.
	Stopped time.Duration `json:"cpus_stopped_ns"`
}

// hostStall reports whether the slice's wake-ups over 20 ms are the
// host's: its CPUs were stopped for at least half as long as the latest
// wake-up, and at least hostStallMin (the accounts' jitter, two CPUs' 10
// ms units and 4 ms ticks, stays under it).
func (f sliceFigures) hostStall() bool {
	return f.Over20ms > 0 && f.Stopped >= max(f.Max/2, hostStallMin)
}

// hostStallMin is the least stopped time hostStall believes.
const hostStallMin = 30 * time.Millisecond

// stopMeter measures how long the machine's CPUs took no tick while busy
// without a break (sys.StoppedCPUTime): a virtual machine's host that did
// not run them. It reads every stopEvery, since a CPU that idled in an
// interval tells nothing for it; a stop of a CPU that idled in the
// same 100 ms is not seen.
type stopMeter struct {
	acc  *sys.CPUAccounts
	mu   sync.Mutex
	last []sys.CPUAccount // nil: the last read failed
	cur  []sys.CPUAccount
	at   int64
	sum  time.Duration // since the last next
	done chan struct{}
	gone sync.WaitGroup
}

// stopEvery is how often a stopMeter reads the CPUs' accounts.
const stopEvery = 100 * time.Millisecond

func newStopMeter() *stopMeter {
	m := &stopMeter{acc: sys.NewCPUAccounts(), done: make(chan struct{})}
	m.read()
	m.gone.Add(1)
	go func() {
		defer m.gone.Done()
		t := time.NewTicker(stopEvery)
		defer t.Stop()
		for {
			select {
			case <-m.done:
				return
			case <-t.C:
				m.mu.Lock()
				m.read()
				m.mu.Unlock()
			}
		}
	}()
	return m
}

// read adds the time stopped since the last read to sum. Under mu (or
// before the goroutine starts).
func (m *stopMeter) read() {
	cur, at, err := m.acc.Read(m.cur)
	if err != nil {
		m.last, m.cur = nil, cur[:0]
		return
	}
	if m.last != nil {
		m.sum += time.Duration(sys.StoppedCPUTime(m.last, cur, m.at, at))
	}
	if m.last == nil {
		m.last = make([]sys.CPUAccount, 0, len(cur))
	}
	m.last, m.cur, m.at = cur, m.last[:0], at
}

// next returns the time stopped since the last next (or the start).
func (m *stopMeter) next() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.read()
	d := m.sum
	m.sum = 0
	return d
}

// close stops the meter's reads.
func (m *stopMeter) close() {
	close(m.done)
	m.gone.Wait()
	_ = m.acc.Close()
}

// figuresOf summarizes one slice's histogram. A histogram bounded below
// 20 ms counts no wake-up over it.
func figuresOf(h hist.Snapshot) sliceFigures {
	over, _ := countOver(h, stallThreshold)
	// The fractions are constants in (0, 1]: Quantile cannot refuse them.
	p99, _ := h.Quantile(0.99)
	p999, _ := h.Quantile(0.999)
	return sliceFigures{Count: h.Count, P99: p99, P999: p999, Max: h.Max, Over20ms: over}
}

// hourThreads is the set as childHALHost reads it: name=period.
func hourThreads(set []setTask) string {
	parts := make([]string, len(set))
	for i, t := range set {
		parts[i] = fmt.Sprintf("%s=%dns", t.name, t.period.Nanoseconds())
	}
	return strings.Join(parts, ",")
}

// hourGroup runs the HAL host and the cyclictest processes alternately,
// b.s.hourRounds rounds of b.s.hourDuration each.
func hourGroup(b *bench) group {
	d := b.s.hourDuration
	slice := min(hourSlice, d)
	host := withMissed(linuxcncSet, func() (childResult, error) { return b.childRaw(b.hourSpec()) })
	c := variant{name: rowHourC, external: true, tasks: setNames(linuxcncSet),
		run: withMissed(linuxcncSet, func() (childResult, error) {
			return runCyclictestSlices(b.tools, b.dir, linuxcncSet, d, slice, b.s.cpu)
		})}
	if b.tools.cyclictest == "" {
		c.skip = "cyclictest not installed"
	}
	var ratios []ratioSpec
	for _, t := range linuxcncSet {
		ratios = append(ratios, ratioSpec{"HAL host / C · " + t.name, rowHourHAL + " · " + t.name, rowHourC + " · " + t.name})
	}
	return group{
		id: "hour", title: "An hour of a HAL host vs C threads, beside allocation and a CPU hog (issue 39)", metric: "set", needFIFO: true,
		load: func(b *bench) (*background, error) { return startHourLoad(b.tools, b.s.alloc) },
		desc: fmt.Sprintf("An rtapi/hal host (rt-preempt flavor) with LinuxCNC's three threads, base 50 µs, servo 1 ms and "+
			"user 10 ms at SCHED_FIFO priorities 80, 79 and 78, running a stepper axis (stepgen pulses on base; siggen, pid and "+
			"stepgen's rate on servo; a siggen on user), against three cyclictest processes with the same periods and priorities "+
			"(`cyclictest -m -p P -i I -t 1 -h %d -q`), %s, one side after the other for %v each (-d), while another process "+
			"allocates %s and `stress-ng --cpu 1` (or this program's cpu=1 load) runs. Each side's run is cut into slices of %v "+
			"(the C side runs its processes slice after slice); the JSON keeps every slice's p99, p99.9, max and wake-ups over "+
			"%v per thread, and how long the machine's CPUs, busy without a break, took no tick in it (cpus_stopped_ns: a virtual machine's "+
			"host that did not run them). %d round(s) (-rounds).", setHistBound/time.Microsecond, setPlacement(b.s.cpu), d, b.s.alloc, slice, stallThreshold, b.s.hourRounds),
		variants: []variant{{name: rowHourHAL, tasks: setNames(linuxcncSet), run: host}, c},
		ratios:   ratios, rounds: b.s.hourRounds,
	}
}

// hourSpec is the hour group's HAL host child, its threads on the CPU
// its C reference is pinned to (setPlacement).
func (b *bench) hourSpec() childSpec {
	d := b.s.hourDuration
	return childSpec{Kind: "halhost", Flavor: "rt-preempt", CPU: b.s.cpu, Threads: hourThreads(linuxcncSet),
		Priority: linuxcncSet[0].priority, Duration: d, HistBound: setHistBound, HAL: hourHAL, Slice: min(hourSlice, d)}
}

// startHourLoad starts the hour group's two loads in other processes:
// allocation at rate, and one SCHED_OTHER CPU hog.
func startHourLoad(t *tools, rate string) (*background, error) {
	alloc, err := startLoadChild([]string{"alloc=" + rate})
	if err != nil {
		return nil, err
	}
	var hog *background
	if t.stressNG != "" {
		hog, err = startBackground(exec.Command(t.stressNG, "--cpu", "1", "--quiet"), "stress-ng --cpu 1")
	} else {
		hog, err = startLoadChild([]string{"cpu=1"})
	}
	if err != nil {
		alloc.stop()
		return nil, err
	}
	alloc.desc += "; " + hog.desc
	alloc.next = hog
	return alloc, nil
}

// runCyclictestSlices runs the set's cyclictest processes, pinned to cpu
// as runCyclictestSet does, for d in slices of slice, one after the
// other, and returns each task's whole histogram with its figures slice
// by slice.
func runCyclictestSlices(t *tools, dir string, set []setTask, d, slice time.Duration, cpu int) (childResult, error) {
	var total childResult
	stops := newStopMeter()
	defer stops.close()
	for done := time.Duration(0); done < d; done += slice {
		r, err := runCyclictestSet(t, dir, set, min(slice, d-done), cpu)
		if err != nil {
			return childResult{}, err
		}
		stopped := stops.next()
		if total.Tasks == nil {
			total = r
			total.Tasks = make([]taskResult, len(r.Tasks))
			for i, task := range r.Tasks {
				total.Tasks[i] = task
				total.Tasks[i].Latency = hist.Snapshot{}
				total.Tasks[i].Cycles = 0
			}
			total.Cycles = 0
		}
		for i, task := range r.Tasks {
			tt := &total.Tasks[i]
			if err := tt.Latency.Merge(task.Latency); err != nil {
				return childResult{}, err
			}
			tt.Cycles += task.Cycles
			f := figuresOf(task.Latency)
			f.Stopped = stopped
			tt.Minutes = append(tt.Minutes, f)
			total.Cycles += task.Cycles
		}
	}
	return total, nil
}

// hourGoals are issue 39's for the hour group: per thread, max ≤ 1.5 ×
// C's, and no slice in which the host woke a thread over 20 ms late
// while C's same thread did not in the same slice.
func hourGoals(res results) []goalResult {
	g := findGroup(res, "hour")
	if g == nil || g.Skipped != "" {
		return nil
	}
	var out []goalResult
	for _, t := range linuxcncSet {
		r := findRatio(g, "HAL host / C · "+t.name)
		goal := goalResult{Goal: fmt.Sprintf("hour, %s thread: max ≤ 1.5 × C", t.name), Limit: 1.5}
		if r == nil || r.Max == 0 {
			goal.Note = "not measured"
		} else {
			goal.Measured, goal.Met = r.Max, r.Max <= 1.5
		}
		out = append(out, goal)

		host, c := findRow(g.Rows, rowHourHAL+" · "+t.name), findRow(g.Rows, rowHourC+" · "+t.name)
		goal = goalResult{Goal: fmt.Sprintf("hour, %s thread: slices with a wake-up over 20 ms that C's lacks (none)", t.name),
			Unit: "slices"}
		if host == nil || c == nil || len(host.Runs) == 0 || len(c.Runs) == 0 {
			goal.Note = "not measured"
		} else {
			n, byHost, slices := unmatchedStalls(host.Runs, c.Runs)
			goal.Measured, goal.Met = float64(n), n == 0
			goal.Detail = fmt.Sprintf("of %d", slices)
			if byHost > 0 {
				goal.Detail += fmt.Sprintf("; %d with the CPUs stopped as long (the host)", byHost)
			}
		}
		out = append(out, goal)
	}
	return out
}

// unmatchedStalls counts the slices, over the rounds, in which host has a
// wake-up over 20 ms and c, in the same round and slice, has none; byHost
// of them are the host's (hostStall).
func unmatchedStalls(host, c []runResult) (n, byHost, slices int) {
	for i := range min(len(host), len(c)) {
		for k, m := range host[i].Minutes {
			slices++
			if m.Over20ms > 0 && (k >= len(c[i].Minutes) || c[i].Minutes[k].Over20ms == 0) {
				n++
				if m.hostStall() {
					byHost++
				}
			}
		}
	}
	return n, byHost, slices
}

// stallSlices is the hour group's table of the slices in which either
// side woke a thread over 20 ms late: round, slice, and each side's
// count and max per thread. The JSON holds every slice.
func stallSlices(g groupResult) string {
	var b strings.Builder
	for _, t := range linuxcncSet {
		host, c := findRow(g.Rows, rowHourHAL+" · "+t.name), findRow(g.Rows, rowHourC+" · "+t.name)
		if host == nil || c == nil {
			continue
		}
		for i := range min(len(host.Runs), len(c.Runs)) {
			hm, cm := host.Runs[i].Minutes, c.Runs[i].Minutes
			for k := range max(len(hm), len(cm)) {
				var h, cc sliceFigures
				if k < len(hm) {
					h = hm[k]
				}
				if k < len(cm) {
					cc = cm[k]
				}
				if h.Over20ms == 0 && cc.Over20ms == 0 {
					continue
				}
				if b.Len() == 0 {
					b.WriteString("\nSlices with a wake-up over 20 ms (count, max µs; CPUs stopped in the slice, ms: " +
						"the time CPUs busy without a break took no tick, a host that did not run them):\n\n" +
						"| thread | round | slice | HAL host | C |\n|---|---:|---:|---|---|\n")
				}
				fmt.Fprintf(&b, "| %s | %d | %d | %d, %s; %.0f | %d, %s; %.0f |\n", t.name, host.Runs[i].Round, k+1,
					h.Over20ms, us(h.Max), ms(h.Stopped), cc.Over20ms, us(cc.Max), ms(cc.Stopped))
			}
		}
	}
	if b.Len() == 0 {
		return "\nNo slice of either side had a wake-up over 20 ms.\n"
	}
	return b.String()
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
