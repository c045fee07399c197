package kerneldetect

import (
	"bytes"
	"compress/gzip"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// The fuzz targets check that parsers never panic and keep their
// invariants on any input. CI runs each for a few seconds from the seed
// corpus: go test -run=^$ -fuzz=^FuzzX$ -fuzztime=5s ./kerneldetect

func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"", "0-3", "0-1,4,6-7\n", "3-1", "(null)", "0-65535", "1,,2", "-"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cpus, err := parseCPUList(b)
		if err != nil {
			return
		}
		if !slices.IsSorted(cpus) || len(slices.Compact(slices.Clone(cpus))) != len(cpus) {
			t.Fatalf("not sorted and unique: %v", cpus)
		}
		// A parsed list survives formatting.
		again, err := parseCPUList([]byte(formatCPUList(cpus)))
		if err != nil || !slices.Equal(again, cpus) {
			t.Fatalf("round trip %v -> %q -> %v, %v", cpus, formatCPUList(cpus), again, err)
		}
	})
}

func FuzzParseStatus(f *testing.F) {
	f.Add([]byte("Name:\tx\nUid:\t0\t0\t0\t0\nCapEff:\t000001fffeffffff\n"))
	f.Add([]byte("CapEff:\n"))
	f.Add([]byte("Uid:\t-1\nCapEff:\tffffffffffffffff\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := parseStatus(b)
		if err == nil && !st.capEffKnown {
			t.Fatal("no error but CapEff unknown")
		}
		if st.uidKnown && st.uid < 0 {
			t.Fatalf("negative uid %d", st.uid)
		}
	})
}

func FuzzParseLimits(f *testing.F) {
	f.Add([]byte("Limit                     Soft Limit           Hard Limit           Units     \nMax realtime priority     0                    0                    \nMax locked memory         unlimited            unlimited            bytes\n"))
	f.Add([]byte("Max a b\n"))
	f.Add([]byte("Max 1 2\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, _ := parseLimits(b)
		for name, l := range m {
			if !l.Known || l.Soft < Unlimited || l.Hard < Unlimited {
				t.Fatalf("%q: bad limit %+v", name, l)
			}
		}
	})
}

func FuzzParseKconfig(f *testing.F) {
	f.Add([]byte("CONFIG_PREEMPT_RT=y\n# CONFIG_PREEMPT is not set\nCONFIG_HZ=250\n"))
	f.Add([]byte("CONFIG_X=\"\n"))
	f.Add([]byte("# CONFIG_ is not set"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, _ := parseKconfig(b)
		for k := range cfg {
			if len(k) <= len("CONFIG_") {
				t.Fatalf("empty option name %q", k)
			}
		}
		configModel(cfg)
	})
}

func FuzzParsePreempt(f *testing.F) {
	f.Add([]byte("none voluntary (full) lazy\n"), "#1 SMP PREEMPT_DYNAMIC @0", "ro preempt=full")
	f.Add([]byte("(x)"), "#1 SMP PREEMPT RT", "preempt -- preempt=none")
	f.Fuzz(func(t *testing.T, debugfs []byte, version, cmdline string) {
		if m, err := parsePreemptDebugfs(debugfs); err == nil && !validMode(m) {
			t.Fatalf("invalid mode %q accepted", m)
		}
		parseVersionFlags(version)
		cmdlineValue(cmdline, "preempt")
		cgroupV1Path(debugfs, "cpu")
		cpuinfoHasFlag(debugfs, "hypervisor")
		modulesHas(debugfs, "rtai_hal")
		parseSingleInt(debugfs)
	})
}

// FuzzDetectFS feeds garbled content to the files detection reads most and
// checks that detection never fails, never panics and always reports
// every check.
func FuzzDetectFS(f *testing.F) {
	f.Add([]byte("6.1.0-47-rt-amd64"), []byte("#1 SMP PREEMPT_RT Debian"), []byte("CapEff:\t0\n"), []byte("0-3"), []byte("CONFIG_PREEMPT_RT=y\n"), []byte("0"),
		[]byte("preempt=full isolcpus=managed_irq,domain,N nohz_full=1-3:1/2 rcu_nocbs threadirqs mitigations=auto,nosmt"))
	f.Add([]byte("../../etc"), []byte(""), []byte(""), []byte("x"), []byte("\x1f\x8b garbage"), []byte("-"), []byte(`"preempt=lazy isolcpus=nohz,all -- nosmt`))
	f.Add([]byte("6.18.0"), []byte("#1 SMP PREEMPT_DYNAMIC"), []byte(""), []byte("0-1"),
		[]byte("CONFIG_PREEMPT_DYNAMIC=y\nCONFIG_PREEMPT_NONE=y\nCONFIG_NO_HZ_FULL=y\nCONFIG_RCU_NOCB_CPU=y\n"), []byte("1"),
		[]byte("preempt=voluntary isolcpus=nohz,0-1 rcu-nocbs=all"))
	f.Fuzz(func(t *testing.T, release, version, status, cpus, config, rt, cmdline []byte) {
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(config)
		zw.Close()
		fsys := fstest.MapFS{
			"proc/sys/kernel/osrelease":                            {Data: release},
			"proc/sys/kernel/version":                              {Data: version},
			"proc/version":                                         {Data: append([]byte("Linux version "), release...)},
			"proc/self/status":                                     {Data: status},
			"proc/cmdline":                                         {Data: cmdline},
			"proc/self/limits":                                     {Data: status},
			"proc/self/cgroup":                                     {Data: cpus},
			"proc/config.gz":                                       {Data: gz.Bytes()},
			"boot/config-" + string(release):                       {Data: config},
			"sys/devices/system/cpu/online":                        {Data: cpus},
			"sys/devices/system/cpu/isolated":                      {Data: cpus},
			"sys/kernel/realtime":                                  {Data: rt},
			"sys/kernel/debug/sched/preempt":                       {Data: version},
			"proc/sys/kernel/sched_rt_runtime_us":                  {Data: rt},
			"sys/fs/cgroup/cpu/cpu.rt_runtime_us":                  {Data: rt},
			"sys/devices/system/cpu/cpu0/cpufreq/scaling_governor": {Data: rt},
		}
		r, err := DetectFS(fsys)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Checks) != len(CheckIDs) {
			t.Fatalf("%d checks", len(r.Checks))
		}
		for i, c := range r.Checks {
			if c.ID != CheckIDs[i] || c.Evidence == "" {
				t.Fatalf("check %d: %+v", i, c)
			}
		}
		if _, err := r.Kind.MarshalText(); err != nil {
			t.Fatal(err)
		}
		if e := r.Preempt.Effective(); e != "" && (r.Preempt.Source == "" || !validMode(e) && e != ModelRT) {
			t.Fatalf("effective model %q from %q", e, r.Preempt.Source)
		}
		for _, list := range [][]int{r.IsolatedCPUs, r.NohzFull, r.RCUNoCBs} {
			checkCPUList(t, list)
		}
	})
}

// FuzzParseBootParams checks the command-line parsers: bounded output,
// sorted CPU lists within range, parameter names spelled with '_'.
func FuzzParseBootParams(f *testing.F) {
	f.Add(`ro "quoted x" nohz-full=2 "preempt=full" -- init`, "managed_irq,domain,2-3", "0-9:2/5,N", 8)
	f.Add("isolcpus", "nohz,future,all", "all", 0)
	f.Add(`a="b`, "domain,", "1-2:3/2", 65536)
	f.Fuzz(func(t *testing.T, cmdline, isol, list string, nr int) {
		params := cmdlineParams(cmdline)
		if len(params) > maxCmdParams {
			t.Fatalf("%d parameters", len(params))
		}
		for _, p := range params {
			if strings.Contains(p.name, "-") {
				t.Fatalf("name %q keeps a dash", p.name)
			}
		}
		if cpus, err := parseCmdlineCPUList(list, nr); err == nil {
			checkCPUList(t, cpus)
		}
		if iso, err := parseIsolcpus(isol, nr); err == nil {
			checkCPUList(t, iso.cpus)
			if !iso.domain && !iso.nohz && !iso.managedIRQ {
				t.Fatal("no isolation flag: domain is the default")
			}
		}
	})
}

func checkCPUList(t *testing.T, cpus []int) {
	t.Helper()
	if len(cpus) > maxCPU {
		t.Fatalf("%d CPUs", len(cpus))
	}
	for i, c := range cpus {
		if c < 0 || c >= maxCPU || i > 0 && cpus[i-1] >= c {
			t.Fatalf("cpu list %v not sorted, unique and in range", cpus)
		}
	}
}
