package latency

import (
	"encoding/json"
	"io"
	"math"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// CyclictestRun is what WriteCyclictestJSON writes: a run described as
// rt-tests describes its own.
type CyclictestRun struct {
	Cmdline    string // the command line, as cyclictest's "cmdline:"
	Version    string // the writer's version, as "rt_test_version:"
	Start, End time.Time
	ReturnCode int
	// RealTime is sysinfo.realtime: 1 on a PREEMPT_RT kernel.
	RealTime bool
	Tasks    []TaskStats
	// Histogram: include each task's latency histogram (cyclictest does
	// with -h); without it "histogram" is an empty object, as there.
	Histogram bool
}

// ctDoc mirrors the JSON document cyclictest --json writes (rt-tests 2.x,
// src/lib/rt-utils.c rt_write_json and cyclictest.c write_stats). Its
// two keys with a trailing colon are rt-tests' own spelling.
type ctDoc struct {
	FileVersion    int                 `json:"file_version"`
	Cmdline        string              `json:"cmdline:"`
	RTTestVersion  string              `json:"rt_test_version:"`
	StartTime      string              `json:"start_time"`
	EndTime        string              `json:"end_time"`
	ReturnCode     int                 `json:"return_code"`
	Sysinfo        ctSysinfo           `json:"sysinfo"`
	NumThreads     int                 `json:"num_threads"`
	ResolutionInNS int64               `json:"resolution_in_ns"`
	Thread         map[string]ctThread `json:"thread"`
}

type ctSysinfo struct {
	Sysname  string `json:"sysname"`
	Nodename string `json:"nodename"`
	Release  string `json:"release"`
	Version  string `json:"version"`
	Machine  string `json:"machine"`
	Realtime int    `json:"realtime"`
}

type ctThread struct {
	Histogram map[string]uint64 `json:"histogram"`
	Cycles    int64             `json:"cycles"`
	Min       int64             `json:"min"`
	Max       int64             `json:"max"`
	Avg       float64           `json:"avg"`
	CPU       int               `json:"cpu"`
	Node      int               `json:"node"`
}

// rtTestsTime is the layout of rt-tests' start_time and end_time.
const rtTestsTime = "Mon, 02 Jan 2006 15:04:05 -0700"

// WriteCyclictestJSON writes r in the layout of cyclictest --json, so
// that tools written for cyclictest's JSON read it unchanged: latencies in
// whole µs, the histogram as bucket→count with only non-empty buckets,
// "cpu" the CPU a task was pinned to (0 when it was not pinned), "node" 0.
func WriteCyclictestJSON(w io.Writer, r CyclictestRun) error {
	var u unix.Utsname
	_ = unix.Uname(&u)
	doc := ctDoc{
		FileVersion:   1,
		Cmdline:       r.Cmdline,
		RTTestVersion: r.Version,
		StartTime:     r.Start.Format(rtTestsTime),
		EndTime:       r.End.Format(rtTestsTime),
		ReturnCode:    r.ReturnCode,
		Sysinfo: ctSysinfo{
			Sysname: unix.ByteSliceToString(u.Sysname[:]), Nodename: unix.ByteSliceToString(u.Nodename[:]),
			Release: unix.ByteSliceToString(u.Release[:]), Version: unix.ByteSliceToString(u.Version[:]),
			Machine: unix.ByteSliceToString(u.Machine[:]),
		},
		NumThreads: len(r.Tasks),
		Thread:     make(map[string]ctThread, len(r.Tasks)),
	}
	if r.RealTime {
		doc.Sysinfo.Realtime = 1
	}
	for i, t := range r.Tasks {
		h := t.Latency
		th := ctThread{Histogram: map[string]uint64{}, Cycles: h.Count}
		if h.Count > 0 {
			th.Min, th.Max = micros(int64(h.Min)), micros(int64(h.Max))
			th.Avg = math.Round(float64(h.Sum)/float64(h.Count)/10) / 100 // µs, two decimals
		}
		if r.Histogram {
			for b, c := range h.Counts {
				if c > 0 {
					th.Histogram[strconv.Itoa(b)] = c
				}
			}
		}
		if len(t.CPUs) > 0 {
			th.CPU = t.CPUs[0]
		}
		doc.Thread[strconv.Itoa(i)] = th
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
