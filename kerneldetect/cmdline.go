package kerneldetect

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// cmdParam is one kernel command-line parameter.
type cmdParam struct {
	name, value string
	hasValue    bool // "name=value" or "name=", not a bare "name"
}

// maxCmdParams bounds the parameters taken from one command line (the
// kernel's own limit, COMMAND_LINE_SIZE, is a few KiB).
const maxCmdParams = 4096

// cmdlineParams splits a kernel command line as the kernel's next_arg
// (lib/cmdline.c) does: parameters are separated by white space, double
// quotes protect white space and are removed around a parameter or its
// value, and everything after "--" belongs to init. Names are returned
// with '-' spelled '_': the kernel matches parameter names that way
// (parameq), so "nohz-full=2" is "nohz_full=2".
func cmdlineParams(cmdline string) []cmdParam {
	var out []cmdParam
	for len(out) < maxCmdParams {
		cmdline = strings.TrimLeft(cmdline, " \t\n\r\v\f")
		if cmdline == "" {
			break
		}
		inQuote, i := false, 0
		for ; i < len(cmdline); i++ {
			c := cmdline[i]
			if c == '"' {
				inQuote = !inQuote
			} else if !inQuote && strings.IndexByte(" \t\n\r\v\f", c) >= 0 {
				break
			}
		}
		arg := cmdline[:i]
		cmdline = cmdline[i:]
		if arg == "--" {
			break
		}
		arg = strings.TrimPrefix(arg, `"`)
		name, value, hasValue := strings.Cut(arg, "=")
		if hasValue {
			value = strings.TrimPrefix(value, `"`)
			value = strings.TrimSuffix(value, `"`)
		} else {
			name = strings.TrimSuffix(name, `"`)
		}
		out = append(out, cmdParam{name: strings.ReplaceAll(name, "-", "_"), value: value, hasValue: hasValue})
	}
	return out
}

// cmdlineValue returns the value of the last occurrence of parameter key
// ("preempt" for "preempt=full"; "" for a bare "isolcpus") and whether it
// is present. The kernel applies a repeated parameter once per
// occurrence, so the last one is what stays in effect.
func cmdlineValue(cmdline, key string) (string, bool) {
	key = strings.ReplaceAll(key, "-", "_")
	val, found := "", false
	for _, p := range cmdlineParams(cmdline) {
		if p.name == key {
			val, found = p.value, true
		}
	}
	return val, found
}

// cmdlineHas reports whether the bare flag parameter name ("threadirqs",
// "nosmt") is on the command line.
func cmdlineHas(cmdline, name string) bool {
	_, found := cmdlineValue(cmdline, name)
	return found
}

// parseCmdlineCPUList parses a CPU list as boot parameters take it
// (bitmap_parselist in lib/bitmap-str.c): "0-3,8", the group form
// "a-b:used/size" (CPUs a, a+1 … a+used-1, then the same from a+size …),
// "all", and "N" for the last CPU. nrCPUs (the number of possible CPUs, 0
// when unknown) resolves "all" and "N". The result is sorted, without
// duplicates and bounded like parseCPUList.
func parseCmdlineCPUList(s string, nrCPUs int) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	last := func(w string) (int, error) {
		if nrCPUs <= 0 || nrCPUs > maxCPU {
			return 0, fmt.Errorf("cpu %q with the number of CPUs unknown: %w", w, errParse)
		}
		return nrCPUs - 1, nil
	}
	var cpus []int
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "all" {
			n, err := last(part)
			if err != nil {
				return nil, err
			}
			part = "0-" + strconv.Itoa(n)
		}
		rng, group, hasGroup := strings.Cut(part, ":")
		lo, hi, isRange := strings.Cut(rng, "-")
		cpu := func(w string) (int, error) {
			if strings.TrimSpace(w) == "N" {
				return last(w)
			}
			return parseCPU(w)
		}
		a, err := cpu(lo)
		if err != nil {
			return nil, err
		}
		b := a
		if isRange {
			if b, err = cpu(hi); err != nil {
				return nil, err
			}
			if b < a {
				return nil, fmt.Errorf("cpu range %q: %w", part, errParse)
			}
		}
		used, size := 1, 1
		if hasGroup {
			u, z, ok := strings.Cut(group, "/")
			used, err = strconv.Atoi(u)
			if err == nil {
				size, err = strconv.Atoi(z)
			}
			if !ok || err != nil || used <= 0 || size <= 0 || used > size || size > maxCPU {
				return nil, fmt.Errorf("cpu group %q: %w", part, errParse)
			}
		}
		for base := a; base <= b; base += size {
			for c := base; c < base+used && c <= b; c++ {
				cpus = append(cpus, c)
			}
			if len(cpus) > maxCPU {
				return nil, fmt.Errorf("cpu list longer than %d: %w", maxCPU, errParse)
			}
		}
	}
	slices.Sort(cpus)
	return slices.Compact(cpus), nil
}

// isolcpus is the isolcpus= boot parameter: [flag-list,]cpu-list.
type isolcpus struct {
	domain     bool     // isolated from the scheduler's load balancing (the default when no known flag is given)
	nohz       bool     // tick stopped when one task runs (as nohz_full=)
	managedIRQ bool     // no managed interrupts
	unknown    []string // flags this parser does not know (the kernel skips them)
	cpus       []int
}

// parseIsolcpus parses an isolcpus= value the way
// housekeeping_isolcpus_setup (kernel/sched/isolation.c) reads it: leading
// words made of letters and '_' are flags ("nohz", "domain",
// "managed_irq"; others are skipped), the rest is a CPU list. With no
// known flag the isolation is "domain", isolcpus's historical meaning.
func parseIsolcpus(v string, nrCPUs int) (isolcpus, error) {
	var iso isolcpus
	rest := v
	for rest != "" {
		word, after, _ := strings.Cut(rest, ",")
		if word == "" || !isFlagWord(word) || word == "all" || word == "N" {
			break
		}
		switch word {
		case "domain":
			iso.domain = true
		case "nohz":
			iso.nohz = true
		case "managed_irq":
			iso.managedIRQ = true
		default:
			if len(iso.unknown) < 8 {
				iso.unknown = append(iso.unknown, truncate(word, 20))
			}
		}
		rest = after
	}
	if !iso.domain && !iso.nohz && !iso.managedIRQ {
		iso.domain = true
	}
	cpus, err := parseCmdlineCPUList(rest, nrCPUs)
	if err != nil {
		return iso, err
	}
	iso.cpus = cpus
	return iso, nil
}

func isFlagWord(w string) bool {
	for _, c := range w {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_') {
			return false
		}
	}
	return true
}

// flags spells the isolation flags in the kernel's words.
func (iso isolcpus) flags() string {
	var f []string
	if iso.domain {
		f = append(f, "domain")
	}
	if iso.nohz {
		f = append(f, "nohz")
	}
	if iso.managedIRQ {
		f = append(f, "managed_irq")
	}
	return strings.Join(f, ",")
}
