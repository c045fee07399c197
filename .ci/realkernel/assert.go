//go:build ignore

// Command assert checks the JSON report that rtcheck printed inside a kernel
// booted by .ci/realkernel.sh. It is run with `go run`, so it stays out of
// `go build ./...`.
//
// Usage: go run assert.go -want rt|std -version FILE [-rtprio FILE -rtprio-exit N] REPORT.json
//
// -want rt:  "kind" must be "preempt-rt", preempt.model "rt" and
// probes.sched_fifo.ok true.
// -want std: "kind" must not be "preempt-rt", preempt.model one of none,
// voluntary, full, lazy, and probes.sched_fifo.ok true.
// With either, when the guest's /proc/version says PREEMPT_DYNAMIC,
// preempt.dynamic must be true and preempt.mode known (debugfs is mounted).
// With -rtprio, the file holds what `rtapi.test -test.run '^TestRTPrioLimit$'
// -test.v` printed inside the guest and -rtprio-exit its exit status: it
// must exit 0 with the test's own "--- PASS" line, neither skipped nor
// failed (the guest's root can give the test's unprivileged child the
// RLIMIT_RTPRIO it needs, so there the test has no excuse to skip).
//
// It prints one summary block (kernel version as seen inside, kind, preempt
// model, the probe, and every check that is not ok) and exits 1 on a failed
// assertion, 2 on a report it cannot read.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
)

type report struct {
	Kind    *string `json:"kind"`
	Preempt *struct {
		Model   string `json:"model"`
		Dynamic bool   `json:"dynamic"`
		Mode    string `json:"mode"`
	} `json:"preempt"`
	Checks []struct {
		ID       string `json:"id"`
		Status   string `json:"status"`
		Evidence string `json:"evidence"`
	} `json:"checks"`
	RTCapable *bool `json:"rt_capable"`
	Probes    struct {
		SchedFIFO *struct {
			OK     bool   `json:"ok"`
			Detail string `json:"detail"`
		} `json:"sched_fifo"`
	} `json:"probes"`
}

var nonRTModels = map[string]bool{"none": true, "voluntary": true, "full": true, "lazy": true}

func main() {
	want := flag.String("want", "", "rt or std")
	versionFile := flag.String("version", "", "file holding /proc/version as read inside the guest")
	rtprioFile := flag.String("rtprio", "", "file holding the output of rtapi.test -test.run '^TestRTPrioLimit$' -test.v run inside the guest")
	rtprioExit := flag.String("rtprio-exit", "", "that run's exit status")
	flag.Parse()
	if flag.NArg() != 1 || (*want != "rt" && *want != "std") {
		fmt.Fprintln(os.Stderr, "usage: assert -want rt|std [-version FILE] [-rtprio FILE -rtprio-exit N] REPORT.json")
		os.Exit(2)
	}
	raw, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "assert:", err)
		os.Exit(2)
	}
	var r report
	if err := json.Unmarshal(raw, &r); err != nil {
		fmt.Fprintf(os.Stderr, "assert: rtcheck -json output is not valid JSON: %v\n--- output ---\n%s\n", err, raw)
		os.Exit(2)
	}

	var version string
	if *versionFile != "" {
		v, _ := os.ReadFile(*versionFile)
		version = strings.TrimSpace(string(v))
		fmt.Printf("  /proc/version: %s\n", version)
	}
	kind := "<missing>"
	if r.Kind != nil {
		kind = *r.Kind
	}
	fmt.Printf("  kind:          %s\n", kind)
	if r.Preempt != nil {
		fmt.Printf("  preempt:       model=%s dynamic=%t mode=%q\n", r.Preempt.Model, r.Preempt.Dynamic, r.Preempt.Mode)
	} else {
		fmt.Printf("  preempt:       <missing>\n")
	}
	if r.RTCapable != nil {
		fmt.Printf("  rt_capable:    %t\n", *r.RTCapable)
	}
	if p := r.Probes.SchedFIFO; p != nil {
		fmt.Printf("  sched_fifo:    ok=%t %s\n", p.OK, p.Detail)
	} else {
		fmt.Printf("  sched_fifo:    <missing probe>\n")
	}
	for _, c := range r.Checks {
		if c.Status != "ok" {
			fmt.Printf("  check %-14s %s: %s\n", c.ID, c.Status, c.Evidence)
		}
	}

	var failures []string
	switch {
	case r.Kind == nil:
		failures = append(failures, `report has no "kind"`)
	case *want == "rt" && *r.Kind != "preempt-rt":
		failures = append(failures, fmt.Sprintf(`kind is %q, want "preempt-rt" on the PREEMPT_RT kernel`, *r.Kind))
	case *want == "std" && *r.Kind == "preempt-rt":
		failures = append(failures, `kind is "preempt-rt" on the standard kernel`)
	}
	// Cross-check the preemption model against the kernel's own version
	// string as read inside the guest: that is the ground truth here.
	switch {
	case r.Preempt == nil:
		failures = append(failures, `report has no "preempt"`)
	case *want == "rt" && r.Preempt.Model != "rt":
		failures = append(failures, fmt.Sprintf(`preempt.model is %q, want "rt" on the PREEMPT_RT kernel`, r.Preempt.Model))
	case *want == "std" && !nonRTModels[r.Preempt.Model]:
		failures = append(failures, fmt.Sprintf(`preempt.model is %q, want none, voluntary, full or lazy (the guest has /boot/config-<release>)`, r.Preempt.Model))
	case strings.Contains(version, "PREEMPT_DYNAMIC") && !r.Preempt.Dynamic:
		failures = append(failures, "preempt.dynamic is false, but /proc/version says PREEMPT_DYNAMIC")
	case r.Preempt.Dynamic && r.Preempt.Mode == "":
		failures = append(failures, "preempt.mode is empty on a PREEMPT_DYNAMIC kernel with debugfs mounted (sys/kernel/debug/sched/preempt)")
	}
	if p := r.Probes.SchedFIFO; p == nil {
		failures = append(failures, `report has no probes.sched_fifo`)
	} else if !p.OK {
		failures = append(failures, fmt.Sprintf("SCHED_FIFO could not be set as root inside the guest: %s", p.Detail))
	}
	if *rtprioFile != "" {
		failures = append(failures, checkRTPrio(*rtprioFile, *rtprioExit)...)
	}
	for _, f := range failures {
		fmt.Printf("  FAIL: %s\n", f)
	}
	if len(failures) > 0 {
		os.Exit(1)
	}
}

// guestTests are the rtapi tests run inside the guest (realkernel.sh's
// -test.run): TestRTPrioLimit, and TestResyncForgetsAFiredRelease, which
// needs a kernel before 6.13 to mean anything (issue 21).
var guestTests = []string{"TestRTPrioLimit", "TestResyncForgetsAFiredRelease"}

// checkRTPrio checks the run of rtapi's guestTests inside the guest and
// prints what TestRTPrioLimit's unprivileged child saw (the test logs it).
func checkRTPrio(file, exit string) []string {
	raw, err := os.ReadFile(file)
	if err != nil {
		return []string{fmt.Sprintf("rtapi.test: %v", err)}
	}
	lines := strings.Split(string(raw), "\n")
	for _, line := range lines {
		// What the test logged (t.Logf), not the traces of a failure.
		if logged := strings.TrimSpace(line); strings.HasPrefix(logged, "rtprio_test.go:") && !strings.HasSuffix(logged, ":") {
			fmt.Printf("  rtprio:        %s\n", logged)
		}
	}
	if exit == "" {
		return []string{"no exit status: rtapi.test did not finish inside the guest"}
	}
	var failures []string
	for _, test := range guestTests {
		var passed, skipped, failed bool
		for _, line := range lines {
			// go test -v puts the test's own result at the start of a
			// line; the child's result, which the test logs, is indented.
			passed = passed || strings.HasPrefix(line, "--- PASS: "+test+" ")
			skipped = skipped || strings.HasPrefix(line, "--- SKIP: "+test+" ")
			failed = failed || strings.HasPrefix(line, "--- FAIL: "+test+" ")
		}
		switch {
		case skipped:
			failures = append(failures, fmt.Sprintf("%s SKIPPED inside the guest, where root can set RLIMIT_RTPRIO", test))
		case failed || !passed:
			failures = append(failures, fmt.Sprintf("%s did not pass inside the guest (exit status %s)", test, exit))
		}
	}
	if len(failures) == 0 && exit != "0" {
		failures = append(failures, fmt.Sprintf("rtapi.test exited %s inside the guest", exit))
	}
	return failures
}
