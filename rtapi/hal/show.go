package hal

import (
	"fmt"
	"io"
	"time"
)

// WriteThreads prints threads and their functions as a table, in the
// spirit of halcmd's "show thread":
//
//	thread servo    period 1ms      prio 97 running  beat 1234  time 2.1µs   tmax 14µs    overruns 0
//	   1 pid.0.do-pid-calcs          time 0.4µs   tmax 3.2µs   calls 1234  overruns 0
//
// Set-up code; it allocates.
func WriteThreads(w io.Writer, threads []ThreadStats) error {
	for _, t := range threads {
		period := t.Period.String()
		if t.Requested != t.Period {
			period += fmt.Sprintf(" (asked %v)", t.Requested)
		}
		if _, err := fmt.Fprintf(w, "thread %-10s period %-16s prio %-3d %-8s beat %-9d time %-9s tmax %-9s overruns %d\n",
			t.Name, period, t.Priority, t.State, t.Beat, short(t.Time), short(t.TMax), t.Overruns); err != nil {
			return err
		}
		for i, f := range t.Functs {
			if _, err := fmt.Fprintf(w, "  %3d %-28s time %-9s tmax %-9s calls %-9d overruns %d\n",
				i+1, f.Name, short(f.Time), short(f.TMax), f.Calls, f.Overruns); err != nil {
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
