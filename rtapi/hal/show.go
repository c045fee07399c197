package hal

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/gortapi/gortapi/internal/names"
)

// WriteThreads prints threads and their functions as the monitors'
// table (halmon, halhost), with state, beat, durations and overruns;
// halcmd's "show thread" prints LinuxCNC's format instead (HAL.Show):
//
//	thread servo    period 1ms      prio 97 running  beat 1234  time 2.1µs   tmax 14µs    overruns 0
//	   1 pid.0.do-pid-calcs          time 0.4µs   tmax 3.2µs   calls 1234  overruns 0
//
// Names are escaped (names.Escape): a monitor reads them from a segment
// another process may write. Set-up code; it allocates.
func WriteThreads(w io.Writer, threads []ThreadStats) error {
	for _, t := range threads {
		period := t.Period.String()
		if t.Requested != t.Period {
			period += fmt.Sprintf(" (asked %v)", t.Requested)
		}
		if _, err := fmt.Fprintf(w, "thread %-10s period %-16s prio %-3d %-8s beat %-9d time %-9s tmax %-9s overruns %d\n",
			names.Escape(t.Name), period, t.Priority, t.State, t.Beat, short(t.Time), short(t.TMax), t.Overruns); err != nil {
			return err
		}
		for i, f := range t.Functs {
			if _, err := fmt.Fprintf(w, "  %3d %-28s time %-9s tmax %-9s calls %-9d overruns %d\n",
				i+1, names.Escape(f.Name), short(f.Time), short(f.TMax), f.Calls, f.Overruns); err != nil {
				return err
			}
		}
	}
	return nil
}

// short rounds a duration for a table: 3 significant digits.
func short(d time.Duration) string {
	switch {
	case d >= 100*time.Millisecond:
		return d.Round(time.Millisecond).String()
	case d >= 100*time.Microsecond:
		return d.Round(time.Microsecond).String()
	case d >= time.Microsecond:
		return d.Round(10 * time.Nanosecond).String()
	}
	return d.String()
}

// NotSustainable is the fraction of overrun cycles from which Verdict
// says a thread's period cannot be sustained: 1 %.
const NotSustainable = 0.01

// Verdict says in one line whether the thread kept its period: the
// fraction of its cycles that overran, for example
//
//	base 50µs: 6.1 % of cycles overran (1220 of 20000) — not sustainable on this machine
func (t ThreadStats) Verdict() string {
	head := fmt.Sprintf("%s %v:", names.Escape(t.Name), t.Period)
	switch {
	case t.Beat <= 0:
		return head + " no cycle yet"
	case t.Overruns <= 0:
		return fmt.Sprintf("%s every cycle of %d kept its period", head, t.Beat)
	}
	f := float64(t.Overruns) / float64(t.Beat)
	prec := 1
	if f >= 0.1 {
		prec = 0
	}
	line := fmt.Sprintf("%s %s %% of cycles overran (%d of %d)", head, strconv.FormatFloat(100*f, 'f', prec, 64), t.Overruns, t.Beat)
	if f >= NotSustainable {
		return line + " — not sustainable on this machine"
	}
	return line
}

// WriteVerdict prints "verdict:" and each thread's Verdict. It allocates.
func WriteVerdict(w io.Writer, threads []ThreadStats) error {
	if _, err := fmt.Fprintln(w, "verdict:"); err != nil {
		return err
	}
	for _, t := range threads {
		if _, err := fmt.Fprintf(w, "  %s\n", t.Verdict()); err != nil {
			return err
		}
	}
	return nil
}
