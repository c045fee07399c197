package kerneldetect

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// errParse marks garbled input.
var errParse = errors.New("garbled")

// maxCPU bounds CPU numbers accepted from a CPU list, so a garbled
// "0-4000000000" cannot make the parser allocate gigabytes.
const maxCPU = 1 << 16

// parseCPUList parses a kernel CPU list such as "0-3,8,10-11\n". An empty
// list is valid (nil). The result is sorted and without duplicates. It is
// parseCmdlineCPUList without the boot parameters' forms (groups; "all"
// and "N" need a CPU count), which a sysfs file never holds.
func parseCPUList(b []byte) ([]int, error) {
	s := strings.TrimSpace(string(b))
	if s == "(null)" {
		return nil, nil
	}
	if strings.Contains(s, ":") {
		return nil, fmt.Errorf("cpu list %q: %w", s, errParse)
	}
	return parseCmdlineCPUList(s, 0)
}

func parseCPU(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 || n >= maxCPU {
		return 0, fmt.Errorf("cpu number %q: %w", s, errParse)
	}
	return n, nil
}

// formatCPUList writes cpus back in kernel list form ("0-3,8").
func formatCPUList(cpus []int) string {
	var sb strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if sb.Len() > 0 {
			sb.WriteByte(',')
		}
		if j > i {
			fmt.Fprintf(&sb, "%d-%d", cpus[i], cpus[j])
		} else {
			fmt.Fprintf(&sb, "%d", cpus[i])
		}
		i = j + 1
	}
	return sb.String()
}

// statusFields holds what the checks need from /proc/self/status.
type statusFields struct {
	capEff      uint64
	capEffKnown bool
	uid         int
	uidKnown    bool
}

// parseStatus parses /proc/<pid>/status for CapEff and the real Uid.
func parseStatus(b []byte) (statusFields, error) {
	var st statusFields
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		key, val, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		v := strings.TrimSpace(string(val))
		switch string(key) {
		case "CapEff":
			n, err := strconv.ParseUint(v, 16, 64)
			if err != nil {
				return st, fmt.Errorf("CapEff %q: %w", v, errParse)
			}
			st.capEff, st.capEffKnown = n, true
		case "Uid":
			f := strings.Fields(v)
			if len(f) == 0 {
				return st, fmt.Errorf("Uid %q: %w", v, errParse)
			}
			n, err := strconv.Atoi(f[0])
			if err != nil || n < 0 {
				return st, fmt.Errorf("Uid %q: %w", v, errParse)
			}
			st.uid, st.uidKnown = n, true
		}
	}
	if !st.capEffKnown {
		return st, fmt.Errorf("no CapEff line: %w", errParse)
	}
	return st, nil
}

// parseLimits parses /proc/<pid>/limits into a map from limit name
// ("Max realtime priority") to its soft and hard values.
func parseLimits(b []byte) (map[string]Limit, error) {
	out := make(map[string]Limit)
	for line := range strings.SplitSeq(string(b), "\n") {
		if !strings.HasPrefix(line, "Max ") {
			continue
		}
		// Columns: name (with spaces), soft, hard, optional units. The
		// name column is 26 characters wide but names are matched by
		// their words, not by width.
		f := strings.Fields(line)
		// Find the first field that is a number or "unlimited".
		i := slices.IndexFunc(f, isLimitValue)
		if i < 1 || i+1 >= len(f) {
			return out, fmt.Errorf("limits line %q: %w", line, errParse)
		}
		soft, err1 := parseLimitValue(f[i])
		hard, err2 := parseLimitValue(f[i+1])
		if err1 != nil || err2 != nil {
			return out, fmt.Errorf("limits line %q: %w", line, errParse)
		}
		out[strings.Join(f[:i], " ")] = Limit{Known: true, Soft: soft, Hard: hard}
	}
	if len(out) == 0 {
		return out, fmt.Errorf("no limits: %w", errParse)
	}
	return out, nil
}

func isLimitValue(s string) bool {
	_, err := parseLimitValue(s)
	return err == nil
}

func parseLimitValue(s string) (int64, error) {
	if s == "unlimited" {
		return Unlimited, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("limit %q: %w", s, errParse)
	}
	return n, nil
}

// versionFlags is what the uname version string says about preemption.
type versionFlags struct {
	rt, preempt, dynamic, lazy bool
}

// parseVersionFlags reads the preemption flags the kernel build writes
// into its version string ("#1 SMP PREEMPT_DYNAMIC ...", "#1 SMP
// PREEMPT_RT ...", or the older "#1 SMP PREEMPT RT ...").
func parseVersionFlags(version string) versionFlags {
	var vf versionFlags
	f := strings.Fields(version)
	for i, w := range f {
		switch w {
		case "PREEMPT_RT":
			vf.rt = true
		case "PREEMPT":
			if i+1 < len(f) && f[i+1] == "RT" {
				vf.rt = true
			} else {
				vf.preempt = true
			}
		case "PREEMPT_DYNAMIC":
			vf.dynamic = true
		case "PREEMPT_LAZY":
			vf.lazy = true
		}
	}
	return vf
}

// parseKconfig parses a kernel .config: "CONFIG_X=value" lines and
// "# CONFIG_X is not set" (value "n"). Quotes around strings are removed.
func parseKconfig(b []byte) (map[string]string, error) {
	out := make(map[string]string)
	for line := range strings.SplitSeq(string(b), "\n") {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "# CONFIG_"); ok {
			if name, ok := strings.CutSuffix(rest, " is not set"); ok && validConfigName(name) {
				out["CONFIG_"+name] = "n"
			}
			continue
		}
		if !strings.HasPrefix(line, "CONFIG_") {
			continue
		}
		name, val, ok := strings.Cut(line, "=")
		if !ok || !validConfigName(strings.TrimPrefix(name, "CONFIG_")) {
			continue
		}
		if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' {
			val = val[1 : len(val)-1]
		}
		out[name] = val
	}
	if len(out) == 0 {
		return out, fmt.Errorf("no CONFIG_ lines: %w", errParse)
	}
	return out, nil
}

func validConfigName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

// configModel returns the preemption model a kernel config selects ("" if
// it selects none) and whether it is PREEMPT_DYNAMIC.
func configModel(cfg map[string]string) (model string, dynamic bool) {
	dynamic = cfg["CONFIG_PREEMPT_DYNAMIC"] == "y"
	switch {
	case cfg["CONFIG_PREEMPT_RT"] == "y":
		model = ModelRT
	case cfg["CONFIG_PREEMPT_LAZY"] == "y":
		model = ModelLazy
	case cfg["CONFIG_PREEMPT"] == "y":
		model = ModelFull
	case cfg["CONFIG_PREEMPT_VOLUNTARY"] == "y":
		model = ModelVoluntary
	case cfg["CONFIG_PREEMPT_NONE"] == "y":
		model = ModelNone
	}
	return model, dynamic
}

// parsePreemptDebugfs parses /sys/kernel/debug/sched/preempt, which lists
// the modes with the current one in parentheses: "none voluntary (full)
// lazy".
func parsePreemptDebugfs(b []byte) (string, error) {
	for w := range strings.FieldsSeq(string(b)) {
		if len(w) > 2 && w[0] == '(' && w[len(w)-1] == ')' {
			m := w[1 : len(w)-1]
			if validMode(m) {
				return m, nil
			}
			return "", fmt.Errorf("preempt mode %q: %w", m, errParse)
		}
	}
	return "", fmt.Errorf("no mode in parentheses: %w", errParse)
}

func validMode(m string) bool {
	switch m {
	case ModelNone, ModelVoluntary, ModelFull, ModelLazy:
		return true
	}
	return false
}

// parseSingleInt parses a one-number pseudo-file such as
// sched_rt_runtime_us ("950000\n", "-1\n").
func parseSingleInt(b []byte) (int64, error) {
	s := strings.TrimSpace(string(b))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("number %q: %w", truncate(s, 40), errParse)
	}
	return n, nil
}

// cgroupV1Path returns the path of the cgroup-v1 hierarchy holding
// controller in a /proc/self/cgroup file ("4:cpu,cpuacct:/docker/abc"),
// the hierarchy's controller list as mounted ("cpu,cpuacct"), and whether
// it was found.
func cgroupV1Path(b []byte, controller string) (path, controllers string, ok bool) {
	for line := range strings.SplitSeq(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 || parts[1] == "" {
			continue
		}
		if slices.Contains(strings.Split(parts[1], ","), controller) {
			return parts[2], parts[1], true
		}
	}
	return "", "", false
}

// cpuinfoHasFlag reports whether the first "flags" line of /proc/cpuinfo
// holds flag, and whether a flags line was found at all.
func cpuinfoHasFlag(b []byte, flag string) (has, found bool) {
	for line := range strings.SplitSeq(string(b), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(key) != "flags" {
			continue
		}
		return slices.Contains(strings.Fields(val), flag), true
	}
	return false, false
}

// modulesHas reports whether /proc/modules lists module name.
func modulesHas(b []byte, name string) bool {
	for line := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == name {
			return true
		}
	}
	return false
}

// firstLine returns the first line of b without trailing space, capped
// at 512 bytes so evidence stays readable.
func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	return truncate(strings.TrimSpace(s), 512)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
