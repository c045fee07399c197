package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/gortapi/gortapi/examples/internal/cli"
	"github.com/gortapi/gortapi/examples/internal/outfile"
	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/kerneldetect"
	"golang.org/x/sys/unix"
)

// Exit statuses.
const (
	exitRTCapable = 0
	exitNotRT     = 1
	exitUsage     = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the command-line flags.
type options struct {
	json    bool
	root    string
	capture string
}

// output is the -json document: the detection report, the verdict and the
// live probes (absent when diagnosing a captured tree).
type output struct {
	*kerneldetect.Report
	RTCapable bool `json:"rt_capable"`
	// NextSteps is what to do next, cheapest first (never empty).
	NextSteps []string `json:"next_steps"`
	Probes    *probes  `json:"probes,omitempty"`
}

type probes struct {
	SchedFIFO probe `json:"sched_fifo"`
}

type probe struct {
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// probeSchedFIFO runs the live probe (it really sets SCHED_FIFO) and
// explains a refusal with what the report read.
func probeSchedFIFO(r *kerneldetect.Report) probe {
	err := sys.ProbeSchedFIFO()
	if err == nil {
		return probe{OK: true, Detail: "set SCHED_FIFO priority 1 on a locked thread and restored its policy"}
	}
	detail := err.Error()
	if errors.Is(err, unix.EPERM) {
		switch {
		case failed(r, kerneldetect.CheckRTGroupSched):
			detail += " (RT group scheduling leaves this cgroup no RT budget: see check rt_group_sched)"
		case failed(r, kerneldetect.CheckSchedFIFO):
			detail += " (no CAP_SYS_NICE and RLIMIT_RTPRIO 0: see check sched_fifo)"
		default:
			detail += " (no CAP_SYS_NICE and RLIMIT_RTPRIO 0, or no RT budget in this cgroup: see checks sched_fifo and rt_group_sched)"
		}
	}
	return probe{OK: false, Detail: detail}
}

// nextSteps is the report's next steps, with the live probe's refusal
// first when the files alone did not explain it.
func nextSteps(r *kerneldetect.Report, out output) []string {
	steps := r.NextSteps()
	if out.Probes != nil && !out.Probes.SchedFIFO.OK && !failed(r, kerneldetect.CheckSchedFIFO) && !failed(r, kerneldetect.CheckRTGroupSched) {
		steps = append([]string{"fix what refused SCHED_FIFO: see probe sched_fifo"}, steps...)
	}
	return steps
}

func failed(r *kerneldetect.Report, id string) bool {
	c, ok := r.Check(id)
	return ok && c.Status == kerneldetect.StatusFail
}

func run(args []string, stdout, stderr io.Writer) int {
	var o options
	fl := flag.NewFlagSet("rtcheck", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.BoolVar(&o.json, "json", false, "print the report as JSON")
	fl.StringVar(&o.root, "root", "", "diagnose a captured tree (a directory laid out like /, or a .tar.gz from -capture) instead of this machine")
	fl.StringVar(&o.capture, "capture", "", "write every file detection reads into this .tar.gz")
	cli.Usage(fl, "[-json] [-root DIR|FILE.tar.gz] [-capture FILE.tar.gz]", "exit status: 0 RT-capable, 1 not RT-capable, 2 usage error")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0 // asked for, and printed
		}
		return exitUsage // the flag package has printed why
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "rtcheck: unexpected argument %q\n", fl.Arg(0))
		fl.Usage()
		return exitUsage
	}

	var src fs.FS
	switch {
	case o.root == "":
		src = os.DirFS("/")
	case strings.HasSuffix(o.root, ".tar.gz") || strings.HasSuffix(o.root, ".tgz"):
		m, err := loadTarGz(o.root)
		if err != nil {
			fmt.Fprintf(stderr, "rtcheck: -root: %v\n", err)
			return exitUsage
		}
		src = m
	default:
		fi, err := os.Stat(o.root)
		if err != nil {
			fmt.Fprintf(stderr, "rtcheck: -root: %v\n", err)
			return exitUsage
		}
		if !fi.IsDir() {
			fmt.Fprintf(stderr, "rtcheck: -root %s: not a directory or .tar.gz\n", o.root)
			return exitUsage
		}
		// os.Root, not os.DirFS: a symlink in the tree (proc/cmdline ->
		// /etc/shadow) must not lead out of it, into the report or into a
		// -capture archive.
		root, err := os.OpenRoot(o.root)
		if err != nil {
			fmt.Fprintf(stderr, "rtcheck: -root: %v\n", err)
			return exitUsage
		}
		defer root.Close()
		if src, err = withDenied(regularFS{root}); err != nil {
			fmt.Fprintf(stderr, "rtcheck: -root: %v\n", err)
			return exitUsage
		}
	}

	var rec *recordingFS
	if o.capture != "" {
		rec = newRecordingFS(src)
		src = rec
	}
	report, err := kerneldetect.DetectFS(src)
	if err != nil { // only misuse: cannot happen with a non-nil fs
		fmt.Fprintf(stderr, "rtcheck: %v\n", err)
		return exitUsage
	}
	out := output{Report: report, RTCapable: report.RTCapable()}
	if o.root == "" {
		out.Probes = &probes{SchedFIFO: probeSchedFIFO(report)}
		out.RTCapable = out.RTCapable && out.Probes.SchedFIFO.OK
	}
	out.NextSteps = nextSteps(report, out)

	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(stderr, "rtcheck: %v\n", err)
			return exitUsage
		}
	} else {
		writeTable(stdout, out, o.root)
	}
	// The capture is written after the report: a path that cannot be
	// written must not cost the user the report.
	if rec != nil {
		n, err := writeCapture(rec, o.capture)
		if err != nil {
			fmt.Fprintf(stderr, "rtcheck: -capture: %v (the report above is complete)\n", err)
			return exitUsage
		}
		fmt.Fprintf(stderr, "rtcheck: captured %d files into %s (diagnose with: rtcheck -root %s)\n", n, o.capture, o.capture)
	}
	if out.RTCapable {
		return exitRTCapable
	}
	return exitNotRT
}

// writeCapture writes the archive readable by its owner only: it holds
// what this user (often root) could read, the kernel command line
// included. A symlink or hard link at name is replaced, not written
// through (examples/internal/outfile).
func writeCapture(rec *recordingFS, name string) (int, error) {
	var buf bytes.Buffer
	n, err := rec.writeTarGz(&buf)
	if err != nil {
		return 0, err
	}
	return n, outfile.WriteFile(name, buf.Bytes(), 0o600)
}

func cpuList(cpus []int) string {
	if len(cpus) == 0 {
		return "-"
	}
	parts := make([]string, len(cpus))
	for i, c := range cpus {
		parts[i] = fmt.Sprint(c)
	}
	return strings.Join(parts, ",")
}

// writeTable prints the human report.
func writeTable(w io.Writer, out output, root string) {
	r := out.Report
	fmt.Fprintf(w, "rtcheck: %s\n\n", cmp.Or(root, "this machine"))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "kernel\t%s %s\n", cmp.Or(r.Uname.Release, "-"), r.Uname.Version)
	fmt.Fprintf(tw, "kind\t%s\n", r.Kind)
	dyn := "no"
	if r.Preempt.Dynamic {
		dyn = "yes"
	}
	fmt.Fprintf(tw, "preempt\tmodel %s, dynamic %s, mode %s: effective %s (from %s)\n", cmp.Or(r.Preempt.Model, "-"), dyn,
		cmp.Or(r.Preempt.Mode, "-"), cmp.Or(r.Preempt.Effective(), "-"), cmp.Or(r.Preempt.Source, "-"))
	fmt.Fprintf(tw, "boot\tthreaded irqs %s (from %s), mitigations %s (from %s), rcu_nocbs %s\n",
		cmp.Or(r.ThreadedIRQs.Value, "-"), cmp.Or(r.ThreadedIRQs.Source, "-"), cmp.Or(r.Mitigations.Value, "-"), cmp.Or(r.Mitigations.Source, "-"), cpuList(r.RCUNoCBs))
	if x := r.Xenomai; x != nil {
		fmt.Fprintf(tw, "xenomai\t%s core, version %s, pipeline %s\n", x.Core, cmp.Or(x.Version, "-"), cmp.Or(x.Pipeline, "-"))
	}
	if a := r.RTAI; a != nil {
		fmt.Fprintf(tw, "rtai\tversion %s\n", cmp.Or(a.Version, "-"))
	}
	fmt.Fprintf(tw, "cpus\tonline %s, isolated %s, nohz_full %s\n", cpuList(r.OnlineCPUs), cpuList(r.IsolatedCPUs), cpuList(r.NohzFull))
	if out.Probes != nil {
		p := out.Probes.SchedFIFO
		st := "ok"
		if !p.OK {
			st = "FAILED"
		}
		fmt.Fprintf(tw, "probe sched_fifo\t%s: %s\n", st, p.Detail)
	}
	verdict := "RT-capable"
	if !out.RTCapable {
		verdict = "NOT RT-capable"
		if !r.Kind.IsRealtime() {
			verdict += " (not a real-time kernel: PREEMPT_RT, Xenomai or RTAI is needed for hard real time)"
		} else {
			verdict += " (see failed checks and probe)"
		}
	}
	fmt.Fprintf(tw, "verdict\t%s\n", verdict)
	for _, s := range out.NextSteps {
		fmt.Fprintf(tw, "next step\t%s\n", s)
	}
	tw.Flush()

	fmt.Fprintln(w, "\nchecks:")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  ID\tSTATUS\tEVIDENCE")
	for _, c := range r.Checks {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", c.ID, strings.ToUpper(string(c.Status)), c.Evidence)
		if c.Remedy != "" {
			fmt.Fprintf(tw, "  \t\tremedy: %s\n", c.Remedy)
		}
	}
	tw.Flush()

	fmt.Fprintln(w, "\nevidence:")
	for _, e := range r.Evidence {
		fmt.Fprintf(w, "  %s: %q: %s\n", cmp.Or(e.File, "-"), e.Value, e.Meaning)
	}
}

// regularFS is a -root tree that opens only regular files and directories,
// without blocking: a FIFO or a device at proc/version in a tree someone
// handed over must not hang rtcheck (a FIFO's open waits for a writer).
type regularFS struct{ root *os.Root }

func (r regularFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	f, err := r.root.OpenFile(name, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if t := fi.Mode().Type(); t != 0 && t != fs.ModeDir {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("not a regular file (%v): %w", t, fs.ErrInvalid)}
	}
	return f, nil
}
