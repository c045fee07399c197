package hal

// The stats segment's design: HACKING.md, "The HAL's segments".

const (
	statsMagic   = 0x314c4148_74726f67 // "gortHAL1", little-endian
	statsVersion = 3
)

type statsHeader struct {
	Magic      uint64
	Version    uint32
	MaxThreads uint32
	MaxFuncts  uint32
	NameLen    uint32
	HostPID    int64
	BasePeriod int64 // atomic
	NThreads   int64 // atomic
	Closed     int64 // atomic: 1 once the host closed the HAL
	NExported  int64 // atomic: the function slots ever filled (a freed one is cleared, not uncounted)
}

// functSlot is a function's name and counters, written by its thread only.
type functSlot struct {
	Name     [NameLen]byte
	Time     int64
	TMax     int64
	Calls    int64
	Overruns int64
}

type threadRecord struct {
	Name      [NameLen]byte
	Period    int64
	Requested int64
	Priority  int64
	State     int64
	Beat      int64
	Time      int64
	TMax      int64
	Overruns  int64
	NFuncts   int64
	Chain     [MaxFuncts]uint16 // indexes into statsLayout.Functs
}

// publish writes the thread's record: its timing and its chain. It runs
// on the thread or, while the thread does not run, from the HAL.
// RT-safe.
func (th *Thread) publish(c *chain, state int64) {
	r := &th.rec
	r.Name = th.nameBuf
	r.Period = th.periodNs
	r.Requested = int64(th.requested)
	r.Priority = th.prio.Load()
	r.State = state
	r.Beat = th.beat.Load()
	r.Time = th.time.Load()
	r.TMax = th.tmax.Load()
	r.Overruns = th.overruns.Load()
	r.NFuncts = int64(len(c.functs))
	for i, f := range c.functs {
		r.Chain[i] = uint16(f.index)
	}
	th.seq.Write(r)
}

// publishIdle sets the thread's state and, when publishing, writes its
// record, guarded against truncation: by the HAL while the thread does
// not run, or by the thread as it ends.
func (th *Thread) publishIdle(state int64) {
	th.state.Store(state)
	if th.seq != nil {
		_ = th.h.pub.guard(func() { th.publish(th.chain.Load(), state) })
	}
}
