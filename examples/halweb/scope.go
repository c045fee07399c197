package main

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gortapi/gortapi/examples/internal/scope"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/sampler"
	"github.com/gortapi/gortapi/rtapi/ipc"
)

// Limits of the scope.
const (
	// MaxChannels is the traces of the scope, as LinuxCNC's halscope.
	MaxChannels = 8
	// MaxSamples bounds a capture's samples (it is kept in memory).
	MaxSamples = 100_000
	// DefaultDepth is the depth of the sampler halweb loads: 0.4 s of a
	// 40 kHz thread between two drains.
	DefaultDepth = 16384
	// MaxDepth bounds -depth (a record of 8 pins is 104 bytes).
	MaxDepth = 1 << 17
	// batchRows is the samples of one rows message.
	batchRows = 4096
	// signalPrefix names the signals halweb makes to trace an unlinked
	// OUT or IO pin: halweb-K, K the sampler pin.
	signalPrefix = "halweb-"
)

// samplerLetter is the sampler's cfg= letter of type t; false for a
// type the sampler cannot trace.
func samplerLetter(t hal.Type) (byte, bool) {
	switch t {
	case hal.TypeFloat:
		return 'f', true
	case hal.TypeBit:
		return 'b', true
	case hal.TypeS32:
		return 's', true
	case hal.TypeU32:
		return 'u', true
	case hal.TypeS64:
		return 'l', true
	case hal.TypeU64:
		return 'k', true
	}
	return 0, false
}

// reusePins maps each trace of a sampler of cfg want onto a pin of the
// loaded sampler of cfg have: the next unused pin of its type. It
// returns nil when have's pins are not want's types (another count, or
// other types): that sampler must be reloaded.
func reusePins(want, have string) []int {
	if len(want) != len(have) {
		return nil
	}
	used := make([]bool, len(have))
	pins := make([]int, len(want))
	for i := range len(want) {
		k := 0
		for k < len(have) && (used[k] || have[k] != want[i]) {
			k++
		}
		if k == len(have) {
			return nil
		}
		used[k], pins[i] = true, k
	}
	return pins
}

// samplerPinName is pin k of halweb's sampler.
func samplerPinName(k int) string { return "sampler.0.pin." + strconv.Itoa(k) }

// ScopeConfig is what the page asks the scope for.
type ScopeConfig struct {
	// Thread runs the sampler (not with -sampler).
	Thread string `json:"thread"`
	// Pins are the traced pins or signals, 1 to MaxChannels (not with
	// -sampler, whose channel's pins are traced).
	Pins []string `json:"pins"`
	// Trigger is the channel that triggers (an index into the traces).
	Trigger int `json:"trigger"`
	// Edge is rising, falling, high or low.
	Edge string `json:"edge"`
	// Level is the trigger level, in the channel's units.
	Level float64 `json:"level"`
	// Mode is normal (capture on each trigger), auto (as normal, and
	// without a trigger after a window's worth of samples, capture
	// anyway) or single (one capture, then stop).
	Mode string `json:"mode"`
	// Samples is the capture's length, 16 to MaxSamples.
	Samples int `json:"samples"`
	// Position is the part of the capture before the trigger, 0 to 1.
	Position float64 `json:"position"`
}

// channel is one trace: its name, type and pin of the sampler's record.
type channel struct {
	Name string
	Type hal.Type
	Pin  int
}

// link is how a trace reaches the sampler: linkps to an existing signal,
// or a new signal netted from an unlinked OUT or IO pin.
type link struct {
	pin    int    // sampler pin
	signal string // existing signal, or the new one
	from   string // the traced pin, when the signal is new
}

// plan is what configuring the scope does.
type plan struct {
	cfg   string // the sampler's cfg=: its pins' type letters
	chans []channel
	links []link
	edge  scope.Edge
}

// checkConfig checks what does not depend on the host.
func (cfg ScopeConfig) check(nchans int) (scope.Edge, error) {
	edge, err := scope.ParseEdge(cfg.Edge)
	if err != nil || edge == scope.Auto {
		return 0, fmt.Errorf("edge %q: want rising, falling, high or low: %w", cfg.Edge, rtapi.ErrInvalid)
	}
	switch {
	case cfg.Mode != "auto" && cfg.Mode != "normal" && cfg.Mode != "single":
		return 0, fmt.Errorf("mode %q: want auto, normal or single: %w", cfg.Mode, rtapi.ErrInvalid)
	case cfg.Samples < 16 || cfg.Samples > MaxSamples:
		return 0, fmt.Errorf("samples %d: want 16 to %d: %w", cfg.Samples, MaxSamples, rtapi.ErrInvalid)
	case !(cfg.Position >= 0 && cfg.Position <= 1):
		return 0, fmt.Errorf("position %v: want 0 to 1: %w", cfg.Position, rtapi.ErrInvalid)
	case math.IsNaN(cfg.Level) || math.IsInf(cfg.Level, 0):
		return 0, fmt.Errorf("level %v: want a finite number: %w", cfg.Level, rtapi.ErrInvalid)
	case cfg.Trigger < 0 || cfg.Trigger >= nchans:
		return 0, fmt.Errorf("trigger channel %d: want 0 to %d: %w", cfg.Trigger, nchans-1, rtapi.ErrInvalid)
	}
	return edge, nil
}

// pre is the samples before the trigger.
func (cfg ScopeConfig) pre() int {
	return min(int(cfg.Position*float64(cfg.Samples)), cfg.Samples-1)
}

// planWiring decides how halweb's sampler traces cfg.Pins on the host
// snap shows: the sampler's cfg= and which of its pins each trace takes,
// and whether a trace links to the pin's signal or nets a new one.
// loaded is the cfg= of halweb's sampler in the host ("" if none): when
// it has the traces' types, in any order, the plan keeps it and gives
// each trace the next free pin of its type, so the sampler is relinked
// and not reloaded; else the cfg= is the traces' type letters in trace
// order, trace k on pin k: the sampler reads only what is traced, as
// LinuxCNC's scope_rt samples only the active channels. A parameter, an
// unknown name or an unlinked IN pin (a new signal would change what it
// reads) is refused. A pin on one of halweb's own signals (its earlier
// wiring, removed before the new one is made) counts as unlinked.
func planWiring(cfg ScopeConfig, snap *hal.Snapshot, loaded string) (plan, error) {
	var p plan
	if len(cfg.Pins) < 1 || len(cfg.Pins) > MaxChannels {
		return p, fmt.Errorf("pins: want 1 to %d: %w", MaxChannels, rtapi.ErrInvalid)
	}
	edge, err := cfg.check(len(cfg.Pins))
	if err != nil {
		return p, err
	}
	p.edge = edge
	if !hasThread(snap, cfg.Thread) {
		return p, fmt.Errorf("thread %q: no such thread: %w", cfg.Thread, rtapi.ErrInvalid)
	}
	letters := make([]byte, 0, len(cfg.Pins))
	for _, name := range cfg.Pins {
		var t hal.Type
		var l link
		if pin, ok := findPin(snap, name); ok {
			t = pin.Type
			switch {
			case pin.Signal != "" && !strings.HasPrefix(pin.Signal, signalPrefix):
				l.signal = pin.Signal
			case pin.Dir == hal.In:
				return p, fmt.Errorf("pin %q is an unlinked IN pin: link it to a signal to trace it: %w", name, rtapi.ErrInvalid)
			default:
				l.from = name
			}
		} else if sig, ok := findSignal(snap, name); ok {
			t, l.signal = sig.Type, name
		} else if isParam(snap, name) {
			return p, fmt.Errorf("%q is a parameter: watch it instead: %w", name, rtapi.ErrInvalid)
		} else {
			return p, fmt.Errorf("no pin or signal %q: %w", name, rtapi.ErrInvalid)
		}
		letter, ok := samplerLetter(t)
		if !ok {
			return p, fmt.Errorf("pin %q: type %v: %w", name, t, rtapi.ErrInvalid)
		}
		letters = append(letters, letter)
		p.chans = append(p.chans, channel{Name: name, Type: t})
		p.links = append(p.links, l)
	}
	p.cfg = string(letters)
	pins := reusePins(p.cfg, loaded)
	if pins != nil {
		p.cfg = loaded
	}
	for i := range p.links {
		k := i
		if pins != nil {
			k = pins[i]
		}
		p.chans[i].Pin, p.links[i].pin = k, k
		if p.links[i].from != "" {
			p.links[i].signal = signalPrefix + strconv.Itoa(k)
		}
	}
	return p, nil
}

func findPin(snap *hal.Snapshot, name string) (hal.PinInfo, bool) {
	for _, p := range snap.Pins {
		if p.Name == name {
			return p, true
		}
	}
	return hal.PinInfo{}, false
}

func findSignal(snap *hal.Snapshot, name string) (hal.SignalInfo, bool) {
	for _, g := range snap.Signals {
		if g.Name == name {
			return g, true
		}
	}
	return hal.SignalInfo{}, false
}

func isParam(snap *hal.Snapshot, name string) bool {
	for _, p := range snap.Params {
		if p.Name == name {
			return true
		}
	}
	return false
}

func hasThread(snap *hal.Snapshot, name string) bool {
	for _, th := range snap.Threads {
		if th.Name == name {
			return true
		}
	}
	return false
}

// samplerThread is the thread running the function sampler.0, or "".
func samplerThread(snap *hal.Snapshot, funct string) string {
	for _, th := range snap.Threads {
		for _, f := range th.Functs {
			if f.Name == funct {
				return th.Name
			}
		}
	}
	return ""
}

// checkSampler decides about the host's component "sampler": absent
// ("": load halweb's), the idle one a killed halweb left (its cfg=, and
// its pins still linked to halweb's signals, to be unlinked: halweb
// takes it over, and reloads it if the traces need other types), or
// another (refused with ErrBusy). halweb's is one channel of 1 to
// MaxChannels pins, in no thread, linked to none but halweb's signals.
func checkSampler(snap *hal.Snapshot) (idle string, stale []string, err error) {
	found := false
	for _, c := range snap.Comps {
		found = found || c.Name == "sampler"
	}
	if !found {
		return "", nil, nil
	}
	if th := samplerThread(snap, "sampler.0"); th != "" {
		return "", nil, fmt.Errorf("the host's sampler.0 runs in thread %s: it is the host's own, or another halweb's; "+
			"start halweb with -sampler 0 to read it as it is wired: %w", th, rtapi.ErrBusy)
	}
	const prefix = "sampler.0.pin."
	var letters [MaxChannels]byte
	n := 0
	for _, p := range snap.Pins {
		if !strings.HasPrefix(p.Name, "sampler.") {
			continue
		}
		if !strings.HasPrefix(p.Name, "sampler.0.") {
			return "", nil, fmt.Errorf("the host has a sampler that is not halweb's (pin %s): "+
				"start halweb with -sampler N to read one of its channels: %w", p.Name, rtapi.ErrBusy)
		}
		if !strings.HasPrefix(p.Name, prefix) {
			continue
		}
		n++
		k, err := strconv.Atoi(strings.TrimPrefix(p.Name, prefix))
		letter, ok := samplerLetter(p.Type)
		if err == nil && k >= 0 && k < MaxChannels && ok {
			letters[k] = letter
		}
		if p.Signal != "" {
			if !strings.HasPrefix(p.Signal, signalPrefix) {
				return "", nil, fmt.Errorf("the host's idle sampler has %s linked to signal %s: %w", p.Name, p.Signal, rtapi.ErrBusy)
			}
			stale = append(stale, p.Name)
		}
	}
	if n < 1 || n > MaxChannels {
		return "", nil, fmt.Errorf("the host has a sampler of %d pins, not halweb's 1 to %d: %w", n, MaxChannels, rtapi.ErrBusy)
	}
	idle = string(letters[:n])
	if strings.IndexByte(idle, 0) >= 0 {
		return "", nil, fmt.Errorf("the host has a sampler that is not halweb's (pins %s0 to %s%d expected): %w",
			prefix, prefix, n-1, rtapi.ErrBusy)
	}
	return idle, stale, nil
}

// Scope is the scope: its configuration and wiring (changed by the HTTP
// handlers under wireMu), and the reader goroutine that drains the
// sampler's ring and triggers.
type Scope struct {
	s      *Server
	wireMu sync.Mutex // serialises configure, run, stop and close
	undo   [][]string // the commands that remove halweb's wiring, in order
	loaded string     // cfg= of halweb's sampler in the host ("": none): close unloads it
	// readMu is held by the reader while it reads src, and by wire to
	// close src before the sampler is unloaded.
	readMu sync.Mutex

	mu      sync.Mutex // guards what follows, shared with the reader
	src     SampleSource
	cfg     ScopeConfig
	chans   []channel
	edge    scope.Edge
	period  int64 // the thread's period, ns
	gen     uint64
	running bool
	state   string
	errText string
	seq     int
	last    *scope.Capture
	lastCfg ScopeConfig
	lastCh  []channel
	lastMsg [][]byte
}

func newScope(s *Server) *Scope { return &Scope{s: s, state: "stopped"} }

// initFixed attaches -sampler's channel and names its traces, so that
// the page shows them before the first configuration.
func (sc *Scope) initFixed() error {
	src, err := sc.fixedSource()
	if err != nil {
		return err
	}
	snap := *sc.s.snapshot(true)
	chans := fixedChannels(&snap, sc.s.o.SamplerCh, src.Types())
	sc.mu.Lock()
	sc.chans = chans
	sc.cfg.Pins = traceNames(chans)
	sc.cfg.Thread = samplerThread(&snap, "sampler."+strconv.Itoa(sc.s.o.SamplerCh))
	sc.mu.Unlock()
	return nil
}

// Configure applies cfg: it wires the traces (or checks them against
// -sampler's channel) and starts capturing.
func (sc *Scope) Configure(cfg ScopeConfig) error {
	sc.wireMu.Lock()
	defer sc.wireMu.Unlock()
	snap := *sc.s.snapshot(true)
	var chans []channel
	var edge scope.Edge
	if sc.s.o.SamplerCh >= 0 {
		src, err := sc.fixedSource()
		if err != nil {
			return err
		}
		chans = fixedChannels(&snap, sc.s.o.SamplerCh, src.Types())
		if edge, err = cfg.check(len(chans)); err != nil {
			return err
		}
		cfg.Pins = nil
		for _, c := range chans {
			cfg.Pins = append(cfg.Pins, c.Name)
		}
		cfg.Thread = samplerThread(&snap, "sampler."+strconv.Itoa(sc.s.o.SamplerCh))
	} else {
		loaded, idle, stale, busy := sc.loaded, "", []string(nil), error(nil)
		if loaded == "" {
			idle, stale, busy = checkSampler(&snap)
			loaded = idle
		}
		p, err := planWiring(cfg, &snap, loaded)
		if err != nil {
			return err
		}
		if busy != nil {
			return busy
		}
		if err := sc.wire(&snap, cfg.Thread, p, idle, stale); err != nil {
			return err
		}
		chans, edge = p.chans, p.edge
	}
	period := int64(0)
	for _, th := range snap.Threads {
		if th.Name == cfg.Thread {
			period = int64(th.Period)
		}
	}
	sc.mu.Lock()
	sc.cfg, sc.chans, sc.edge, sc.period = cfg, chans, edge, period
	sc.gen++
	sc.running, sc.state, sc.errText = true, "waiting", ""
	sc.mu.Unlock()
	sc.broadcastState()
	return nil
}

// fixedSource attaches -sampler's channel once.
func (sc *Scope) fixedSource() (SampleSource, error) {
	sc.mu.Lock()
	src := sc.src
	sc.mu.Unlock()
	if src != nil {
		return src, nil
	}
	src, err := sc.s.o.Attach(sc.s.o.SamplerCh)
	if err != nil {
		return nil, err
	}
	sc.mu.Lock()
	sc.src = src
	sc.mu.Unlock()
	return src, nil
}

// fixedChannels names the first MaxChannels pins of the host's sampler
// channel ch by their signals (else the pin's name).
func fixedChannels(snap *hal.Snapshot, ch int, types []hal.Type) []channel {
	var out []channel
	for k := 0; k < len(types) && k < MaxChannels; k++ {
		name := "sampler." + strconv.Itoa(ch) + ".pin." + strconv.Itoa(k)
		if p, ok := findPin(snap, name); ok && p.Signal != "" {
			name = p.Signal
		}
		out = append(out, channel{Name: name, Type: types[k], Pin: k})
	}
	return out
}

// wire makes p's wiring: it removes halweb's earlier wiring, loads
// halweb's sampler with p.cfg (unloading the one loaded, if of another
// cfg=), attaches its ring and links p's traces, undoing what it did on
// failure. When no sampler of halweb's is loaded yet, it first takes
// over idle (a killed halweb's sampler, "" if none), unlinking its stale
// pins, and deletes the halweb- signals a killed halweb left. A failure
// once the earlier wiring is gone stops the scope, with the error.
func (sc *Scope) wire(snap *hal.Snapshot, thread string, p plan, idle string, stale []string) error {
	if sc.loaded == "" {
		for _, pin := range stale { // a dead halweb's links
			sc.s.do("unlinkp", pin)
		}
		for _, g := range snap.Signals {
			if strings.HasPrefix(g.Name, signalPrefix) {
				sc.s.do("delsig", g.Name)
			}
		}
		sc.loaded = idle
	}
	sc.unwire()
	var undo [][]string
	fail := func(err error) error {
		sc.undo = undo
		sc.unwire()
		sc.halt(err)
		return err
	}
	if sc.loaded != p.cfg {
		if err := sc.reload(p.cfg); err != nil {
			return fail(err)
		}
	}
	sc.mu.Lock()
	attached := sc.src != nil
	sc.mu.Unlock()
	if !attached {
		src, err := sc.s.o.Attach(0)
		if err != nil {
			return fail(fmt.Errorf("attach halweb's sampler: %w", err))
		}
		sc.mu.Lock()
		sc.src = src
		sc.mu.Unlock()
	}
	for _, l := range p.links {
		pin := samplerPinName(l.pin)
		if l.from != "" {
			if _, ok := findSignal(snap, l.signal); ok {
				sc.s.do("delsig", l.signal) // a dead halweb's, or the earlier wiring's
			}
			if _, err := sc.s.do("net", l.signal, l.from, pin); err != nil {
				return fail(err)
			}
			undo = append(undo, []string{"delsig", l.signal})
		} else {
			if _, err := sc.s.do("linkps", pin, l.signal); err != nil {
				return fail(err)
			}
			undo = append(undo, []string{"unlinkp", pin})
		}
	}
	if _, err := sc.s.do("addf", "sampler.0", thread); err != nil {
		return fail(err)
	}
	undo = append([][]string{{"delf", "sampler.0", thread}}, undo...)
	sc.undo = undo
	sc.s.o.Log.Printf("scope: sampler.0 in %s tracing %s", thread, strings.Join(traceNames(p.chans), ", "))
	return nil
}

// reload replaces halweb's sampler by one of cfg (loaded while none is):
// it detaches the ring, unloads the sampler (unloadrt sampler) and loads
// the new one over the command socket. Its wiring is already removed.
func (sc *Scope) reload(cfg string) error {
	sc.detach()
	if sc.loaded != "" {
		if _, err := sc.s.do("unloadrt", "sampler"); err != nil {
			return fmt.Errorf("unload halweb's sampler of cfg=%s to load one of cfg=%s: %w", sc.loaded, cfg, err)
		}
		sc.s.o.Log.Printf("unloaded sampler cfg=%s", sc.loaded)
		sc.loaded = ""
	}
	if _, err := sc.s.do("loadrt", "sampler", "cfg="+cfg, "depth="+strconv.Itoa(sc.s.o.Depth)); err != nil {
		return fmt.Errorf("load halweb's sampler of cfg=%s: %w", cfg, err)
	}
	sc.s.o.Log.Printf("loaded sampler cfg=%s depth=%d", cfg, sc.s.o.Depth)
	sc.loaded = cfg
	return nil
}

// detach closes the sampler's ring once the reader no longer reads it.
func (sc *Scope) detach() {
	sc.readMu.Lock()
	defer sc.readMu.Unlock()
	sc.mu.Lock()
	src := sc.src
	sc.src = nil
	sc.gen++ // the reader takes the nil source at its next drain
	sc.mu.Unlock()
	if src != nil {
		if err := src.Close(); err != nil {
			sc.s.o.Log.Printf("scope: detach the sampler's ring: %v", err)
		}
	}
}

// halt stops the scope on a failed configuration, with err as its state.
func (sc *Scope) halt(err error) {
	sc.mu.Lock()
	sc.gen++
	sc.running, sc.state, sc.errText = false, "error", err.Error()
	sc.mu.Unlock()
	sc.broadcastState()
}

func traceNames(chans []channel) []string {
	var out []string
	for _, c := range chans {
		out = append(out, c.Name)
	}
	return out
}

// unwire removes halweb's wiring from the host (best effort: each
// failure is logged).
func (sc *Scope) unwire() {
	for _, cmd := range sc.undo {
		if _, err := sc.s.do(cmd[0], cmd[1:]...); err != nil {
			sc.s.o.Log.Printf("scope: undo %s: %v", strings.Join(cmd, " "), err)
		}
	}
	sc.undo = nil
}

// Run starts capturing with the current configuration; Stop stops.
func (sc *Scope) Run() error {
	sc.mu.Lock()
	if sc.chans == nil || sc.cfg.Samples == 0 {
		sc.mu.Unlock()
		return fmt.Errorf("the scope is not configured yet: %w", rtapi.ErrInvalid)
	}
	sc.gen++
	sc.running, sc.state, sc.errText = true, "waiting", ""
	sc.mu.Unlock()
	sc.broadcastState()
	return nil
}

// Stop stops capturing; the last capture stays.
func (sc *Scope) Stop() {
	sc.mu.Lock()
	sc.running, sc.state = false, "stopped"
	sc.mu.Unlock()
	sc.broadcastState()
}

// close removes halweb's wiring, detaches the ring and unloads halweb's
// sampler (unloadrt sampler); the server's goroutines have stopped.
func (sc *Scope) close() error {
	sc.wireMu.Lock()
	defer sc.wireMu.Unlock()
	gone := sc.s.gone.Load()
	if !gone {
		sc.unwire()
	}
	sc.mu.Lock()
	var err error
	if sc.src != nil {
		err = sc.src.Close()
		sc.src = nil
	}
	sc.mu.Unlock()
	if sc.loaded != "" && !gone {
		if _, uerr := sc.s.do("unloadrt", "sampler"); uerr != nil {
			sc.s.o.Log.Printf("scope: unloadrt sampler: %v", uerr)
		} else {
			sc.s.o.Log.Printf("unloaded sampler cfg=%s", sc.loaded)
		}
		sc.loaded = ""
	}
	return err
}

// scopeStatus is /api/scope's answer and the state message.
type scopeStatus struct {
	Type    string      `json:"type"`
	Running bool        `json:"running"`
	State   string      `json:"state"`
	Error   string      `json:"error,omitempty"`
	Fixed   bool        `json:"fixed"`
	Config  ScopeConfig `json:"config"`
	Names   []string    `json:"names"`
	Types   []string    `json:"types"`
	Seq     int         `json:"seq"`
}

func (sc *Scope) status() scopeStatus {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	st := scopeStatus{Type: "state", Running: sc.running, State: sc.state, Error: sc.errText, Fixed: sc.s.o.SamplerCh >= 0,
		Config: sc.cfg, Names: []string{}, Types: []string{}, Seq: sc.seq}
	for _, c := range sc.chans {
		st.Names = append(st.Names, c.Name)
		st.Types = append(st.Types, c.Type.String())
	}
	return st
}

func (sc *Scope) stateMessage() []byte { return mustJSON(sc.status()) }

func (sc *Scope) broadcastState() { sc.s.hub.broadcast(sc.stateMessage()) }

// lastMessages are the last capture's messages, for a page that joins.
func (sc *Scope) lastMessages() [][]byte {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.lastMsg
}

// read drains the sampler's ring every Poll (by default pollPeriod of
// halweb's sampler, else minPoll), triggers and publishes the
// captures. A capture after another starts with a sample at least
// 1/Rate later in the host's time than the other's last one: the page
// could show no more. It never sleeps in the ring (the host's thread
// would then wake it each cycle) and never waits for a client.
func (sc *Scope) read() {
	defer sc.s.wg.Done()
	poll := cmp.Or(sc.s.o.Poll, minPoll)
	tick := time.NewTicker(poll)
	defer tick.Stop()
	var (
		gen      uint64
		src      SampleSource
		capt     *scope.Capture
		cfg      ScopeConfig
		chans    []channel
		edge     scope.Edge
		proj     []uint64
		waited   int
		rearmAt  int64 // host time (ns) a new capture may start
		reported error
	)
	holdoff := int64(time.Second) / int64(sc.s.o.Rate)
	// drain reads the ring once, under readMu: wire closes src only
	// between two drains, and the next one sees the new gen.
	drain := func() {
		sc.readMu.Lock()
		defer sc.readMu.Unlock()
		sc.mu.Lock()
		running := sc.running
		if sc.gen != gen {
			gen, src, cfg, chans, edge = sc.gen, sc.src, sc.cfg, sc.chans, sc.edge
			capt, waited, rearmAt = nil, 0, math.MinInt64
			if sc.s.o.Poll == 0 && sc.s.o.SamplerCh < 0 {
				if d := pollPeriod(time.Duration(sc.period), sc.s.o.Depth, sc.s.o.Rate); d != poll {
					poll = d
					tick.Reset(d)
				}
			}
		}
		sc.mu.Unlock()
		if src == nil {
			return
		}
		if capt == nil && running && chans != nil {
			capt = newCapture(cfg, chans, edge)
			proj = make([]uint64, len(chans))
			if _, _, _, err := capt.SkipStale(src); err != nil {
				sc.fail(gen, err)
				return
			}
		}
		for range 1 << 16 { // bounded: a fast thread cannot keep it here
			smp, err := src.TryNext()
			if errors.Is(err, ipc.ErrEmpty) {
				break
			}
			if err != nil {
				if !errors.Is(err, reported) {
					sc.s.o.Log.Printf("scope: %v", err)
					reported = err
				}
				if errors.Is(err, sampler.ErrCorrupt) {
					continue
				}
				sc.fail(gen, err)
				break
			}
			if !running || capt == nil || smp.Time < rearmAt {
				continue // drain while stopped or holding off
			}
			for i, c := range chans {
				if c.Pin < len(smp.Values) {
					proj[i] = smp.Values[c.Pin]
				}
			}
			smp.Values = proj
			if capt.Fired < 0 {
				if waited++; cfg.Mode == "auto" && waited > capt.Total {
					capt.Trigger.Edge = scope.Auto
				}
			}
			if !capt.Add(smp) {
				continue
			}
			sc.publish(gen, capt, cfg, chans)
			if cfg.Mode == "single" {
				sc.mu.Lock()
				if sc.gen == gen {
					sc.running, sc.state = false, "stopped"
				}
				sc.mu.Unlock()
				running = false
				sc.broadcastState()
				capt = nil
				continue
			}
			capt, waited = newCapture(cfg, chans, edge), 0
			rearmAt = smp.Time + holdoff
		}
	}
	for {
		select {
		case <-sc.s.stop:
			return
		case <-tick.C:
		}
		drain()
	}
}

// minPoll is the shortest time between two drains of the ring, and the
// time when the ring's depth or the thread's period is not known.
const minPoll = 10 * time.Millisecond

// pollPeriod is the time between two drains of a ring of depth samples
// written every period: an eighth of the time it takes to fill (a late
// drain still finds room), at most one watch period (1/rate: the page
// sees no sooner) and at least minPoll. Fewer drains are fewer wake-ups
// of halweb on the host's CPUs.
func pollPeriod(period time.Duration, depth, rate int) time.Duration {
	if period <= 0 || depth <= 0 || rate <= 0 {
		return minPoll
	}
	return max(minPoll, min(period*time.Duration(depth)/8, time.Second/time.Duration(rate)))
}

func newCapture(cfg ScopeConfig, chans []channel, edge scope.Edge) *scope.Capture {
	types := make([]hal.Type, len(chans))
	for i, c := range chans {
		types[i] = c.Type
	}
	return scope.NewCapture(scope.Trigger{Pin: cfg.Trigger, Edge: edge, Level: cfg.Level}, cfg.pre(), cfg.Samples, types)
}

// fail stops the scope on an error of its ring.
func (sc *Scope) fail(gen uint64, err error) {
	sc.mu.Lock()
	if sc.gen == gen {
		sc.running, sc.state, sc.errText = false, "error", err.Error()
	}
	sc.mu.Unlock()
	sc.broadcastState()
}

// publish keeps a complete capture for export and sends it to the pages.
func (sc *Scope) publish(gen uint64, c *scope.Capture, cfg ScopeConfig, chans []channel) {
	sc.mu.Lock()
	if sc.gen != gen {
		sc.mu.Unlock()
		return
	}
	seq := sc.seq + 1 // one reader per gen publishes: no other can take it
	period := sc.period
	sc.mu.Unlock()
	msgs := captureMessages(seq, c, cfg, chans, period)
	sc.mu.Lock()
	if sc.gen != gen {
		sc.mu.Unlock()
		return
	}
	// Counted only once stored: whoever sees capture seq can export it.
	sc.seq, sc.state = seq, "triggered"
	sc.last, sc.lastCfg, sc.lastCh, sc.lastMsg = c, cfg, chans, msgs
	sc.mu.Unlock()
	sc.s.hub.broadcastCapture(msgs)
}

// captureMessages encodes a capture for the page: a JSON header, the
// rows in binary batches (rowsMessage) and a JSON end.
func captureMessages(seq int, c *scope.Capture, cfg ScopeConfig, chans []channel, period int64) [][]byte {
	names, types := traceNames(chans), make([]string, len(chans))
	for i, ch := range chans {
		types[i] = ch.Type.String()
	}
	msgs := [][]byte{mustJSON(map[string]any{"type": "capture", "seq": seq, "names": names, "types": types,
		"fired": c.Fired, "total": len(c.Rows), "periodNs": period, "config": cfg, "gaps": c.Gaps()})}
	if len(c.Rows) == 0 {
		return append(msgs, mustJSON(map[string]any{"type": "end", "seq": seq}))
	}
	t0 := c.Rows[max(c.Fired, 0)].Time
	for off := 0; off < len(c.Rows); off += batchRows {
		msgs = append(msgs, rowsMessage(seq, off, c.Rows[off:min(off+batchRows, len(c.Rows))], t0, chans))
	}
	return append(msgs, mustJSON(map[string]any{"type": "end", "seq": seq}))
}

// Binary rows messages. Every other message is a JSON object, which
// starts with '{'; a rows message starts with rowsKind.
const (
	rowsKind   = 1
	rowsHeader = 24 // bytes before the columns: a multiple of 8
)

// rowsMessage encodes rows (offset off in capture seq) as one binary
// WebSocket message, little-endian: six uint32 (rowsKind, seq modulo
// 2^32, off, the rows n, the channels k, 0), then n float64 cycles, n
// float64 seconds from the trigger (time t0), and n float64 values of
// each channel (NaN and infinities as they are). The values are copied,
// not formatted: as JSON numbers they took most of halweb's CPU time
// (docs/HALWEB.md).
func rowsMessage(seq, off int, rows []scope.Row, t0 int64, chans []channel) []byte {
	n := len(rows)
	b := make([]byte, rowsHeader, rowsHeader+8*n*(2+len(chans)))
	for i, v := range [...]uint32{rowsKind, uint32(seq), uint32(off), uint32(n), uint32(len(chans))} {
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	for _, r := range rows {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(float64(r.Cycle)))
	}
	for _, r := range rows {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(float64(r.Time-t0)/1e9))
	}
	for k, ch := range chans {
		for _, r := range rows {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(scope.Value(ch.Type, r.Values[k])))
		}
	}
	return b
}

// Handlers.

func (s *Server) scopeGet(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, s.scope.status())
}

func (s *Server) scopeSet(w http.ResponseWriter, r *http.Request) {
	var cfg ScopeConfig
	if !decode(w, r, &cfg) {
		return
	}
	if err := s.scope.Configure(cfg); err != nil {
		code := http.StatusBadRequest
		if errors.Is(err, rtapi.ErrBusy) {
			code = http.StatusConflict
		}
		http.Error(w, "halweb: "+err.Error(), code)
		return
	}
	s.o.Log.Printf("scope configured by %s", r.RemoteAddr)
	writeJSON(w, s.scope.status())
}

func (s *Server) scopeRun(w http.ResponseWriter, r *http.Request) {
	if err := s.scope.Run(); err != nil {
		http.Error(w, "halweb: "+err.Error(), http.StatusBadRequest)
		return
	}
	writeJSON(w, s.scope.status())
}

func (s *Server) scopeStop(w http.ResponseWriter, r *http.Request) {
	s.scope.Stop()
	writeJSON(w, s.scope.status())
}

// lastCapture is the last complete capture, its traces and a title.
func (sc *Scope) lastCapture() (*scope.Capture, []channel, ScopeConfig) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.last, sc.lastCh, sc.lastCfg
}

func (s *Server) exportCSV(w http.ResponseWriter, r *http.Request) {
	c, chans, _ := s.scope.lastCapture()
	if c == nil {
		http.Error(w, "halweb: nothing captured yet", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="capture.csv"`)
	scope.WriteCSV(w, c, traceNames(chans))
}

func (s *Server) exportSVG(w http.ResponseWriter, r *http.Request) {
	c, chans, cfg := s.scope.lastCapture()
	if c == nil {
		http.Error(w, "halweb: nothing captured yet", http.StatusNotFound)
		return
	}
	traces := make([]scope.Trace, len(chans))
	for i, ch := range chans {
		traces[i] = scope.Trace{Name: ch.Name, Pin: i}
	}
	trig := ""
	if cfg.Trigger < len(chans) {
		trig = chans[cfg.Trigger].Name
	}
	title := fmt.Sprintf("halweb: %d samples in %s, trigger %s %s %g", len(c.Rows), cfg.Thread, trig, cfg.Edge, cfg.Level)
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Content-Disposition", `attachment; filename="capture.svg"`)
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	scope.WriteSVG(w, title, c, traces)
}
