package hal

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// Data reads and sets a HAL's components, pins, parameters and signals
// through its data segment, from another process (AttachData) or the host
// (HAL.Data). The segment is untrusted input: a corrupt or hostile one
// gives ErrCorrupt, never a panic, an access outside it or an endless
// loop; one truncated under it gives shm.ErrTruncated. A Data is for one
// goroutine at a time.
type Data struct {
	seg    *shm.Segment // nil: the host's own memory
	host   *dataStore   // the host's own tables (HAL.Data), else nil
	l      *dataLayout
	closed bool
}

// hostGone reports whether the host of seg is gone: closed (loaded under
// the guard, since taking a field's address touches the mapping), dead,
// its segment unlinked, or truncated under this attachment.
func hostGone(seg *shm.Segment, closed func() int64) bool {
	var c int64
	if err := seg.Guard(func() { c = closed() }); err != nil || c != 0 {
		return true
	}
	if seg.Check() != nil {
		return true
	}
	if !sys.ProcessAlive(seg.CreatorPID()) {
		return true
	}
	gone, err := seg.Unlinked()
	return gone || errors.Is(err, shm.ErrClosed)
}

// HostGone reports whether the host is gone: it closed its HAL, its
// process died, the segment's name was unlinked, or the segment was
// truncated under this attachment. A viewer then closes and attaches
// again to follow a restarted host. It makes system calls.
func (d *Data) HostGone() bool {
	closed := func() int64 { return atomic.LoadInt64(&d.l.Header.Closed) }
	switch {
	case d.closed:
		return true
	case d.host != nil:
		var c int64
		d.host.access(func() { c = closed() })
		return c != 0
	}
	return hostGone(d.seg, closed)
}

// errReadOnly is what SetP and SetS return on a read-only attachment.
var errReadOnly = fmt.Errorf("the data segment is attached read-only: %w", rtapi.ErrPermission)

// CompInfo describes a component.
type CompInfo struct {
	Name  string
	PID   int
	Ready bool
}

// PinInfo describes a pin and its value.
type PinInfo struct {
	Owner  string // the component
	Name   string
	Type   Type
	Dir    Dir
	Value  uint64 // the word the pin reads: its signal's when linked
	Signal string // "" when unlinked
}

// ParamInfo describes a parameter and its value.
type ParamInfo struct {
	Owner string
	Name  string
	Type  Type
	Dir   ParamDir
	Value uint64
}

// SignalInfo describes a signal, its value and the pins linked to it.
type SignalInfo struct {
	Name   string
	Type   Type
	Value  uint64
	Pins   []string // linked pins, in table order
	Dirs   []Dir    // their directions
	Writer string   // the Out pin, "" when none
	slot   int
}

// DataSnapshot is what Data.Read returns. Names come from the segment
// with control characters replaced by '?'.
type DataSnapshot struct {
	HostPID    int
	HostClosed bool
	Comps      []CompInfo
	Pins       []PinInfo
	Params     []ParamInfo
	Signals    []SignalInfo
}

// maxGenTries bounds Read's retries while the host keeps changing links.
const maxGenTries = 100

// AttachData attaches to the data segment of a running host: o.Key is the
// host's Options.DataKey. Errors are those of OpenMonitor.
func AttachData(o MonitorOptions) (*Data, error) {
	const op = "attach data"
	if o.Key == 0 {
		return nil, errf(op, "", "", rtapi.ErrInvalid, "a data segment key is required")
	}
	seg, err := shm.Attach(shm.Options{Dir: o.Dir, Instance: o.Instance, Group: o.Group, AllowUIDs: o.AllowUIDs, ReadOnly: o.ReadOnly}, o.Key)
	if errors.Is(err, shm.ErrInvalid) {
		err = fmt.Errorf("%w (%w)", err, rtapi.ErrInvalid)
	}
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	if seg.Size() != sizeofData() {
		seg.Close()
		return nil, errf(op, "", "", rtapi.ErrInvalid, "segment %s is not a HAL data segment of this build: it holds %d bytes, not %d",
			seg.Name(), seg.Size(), sizeofData())
	}
	l, err := shm.View[dataLayout](seg, 0)
	if err != nil {
		seg.Close()
		return nil, &Error{Op: op, Err: err}
	}
	d := &Data{seg: seg, l: l}
	var herr error
	if err := seg.Guard(func() { herr = checkDataHeader(&l.Header, true) }); err != nil || herr != nil {
		seg.Close()
		return nil, &Error{Op: op, Err: errors.Join(err, herr)}
	}
	return d, nil
}

// Data returns a reader of the HAL's own data tables, the view AttachData
// gives another process; it keeps working after a truncation
// (HAL.DataErr). After Close it returns ErrClosed; one taken before Close
// must not be used after it.
func (h *HAL) Data() *Data {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.repairData()
	return &Data{host: h.data, l: h.data.l, closed: h.closed}
}

// checkDataHeader checks the header against this build's layout. At
// attach a zero magic is a header not yet written; later it is corruption.
func checkDataHeader(h *dataHeader, attaching bool) error {
	magic := atomic.LoadUint64(&h.Magic)
	if magic == 0 && attaching {
		return notWritten("data")
	}
	if magic != dataMagic || atomic.LoadUint32(&h.Version) != dataVersion || atomic.LoadUint32(&h.NameLen) != NameLen ||
		atomic.LoadUint32(&h.MaxComps) != MaxComps || atomic.LoadUint32(&h.MaxPins) != MaxPins ||
		atomic.LoadUint32(&h.MaxParams) != MaxParams || atomic.LoadUint32(&h.MaxSignals) != MaxSignals {
		return corrupt("not a HAL data segment of layout %d (magic %#x)", dataVersion, magic)
	}
	return nil
}

// guard runs f over the segment, turning a truncation into an error.
func (d *Data) guard(op string, f func() error) error {
	if d.closed {
		return &Error{Op: op, Err: rtapi.ErrClosed}
	}
	var err error
	run := func() { err = f() }
	if d.host != nil {
		d.host.access(run)
	} else if gerr := d.seg.Guard(run); gerr != nil {
		return &Error{Op: op, Err: gerr}
	}
	if err != nil {
		if d.seg != nil {
			if terr := d.seg.Check(); errors.Is(terr, shm.ErrTruncated) {
				err = terr
			}
		}
		return &Error{Op: op, Err: err}
	}
	return nil
}

// Read copies every component, pin, parameter and signal: the wiring as
// of one moment between changes, the values live. It allocates.
func (d *Data) Read() (DataSnapshot, error) {
	var s DataSnapshot
	err := d.guard("data read", func() error {
		var err error
		for range maxGenTries {
			g := atomic.LoadUint64(&d.l.Header.Gen)
			if g%2 == 0 {
				s, err = d.read()
				if atomic.LoadUint64(&d.l.Header.Gen) == g {
					return err // else a change ran under the read: a torn table is not corruption
				}
			}
		}
		return fmt.Errorf("the wiring changed during each of %d reads: %w", maxGenTries, rtapi.ErrBusy)
	})
	if err != nil {
		return DataSnapshot{}, err
	}
	return s, nil
}

// count loads a count and checks it against this build's limit.
func count(p *int64, limit int, what string) (int, error) {
	n := atomic.LoadInt64(p)
	if n < 0 || n > int64(limit) {
		return 0, corrupt("%s count %d outside 0..%d", what, n, limit)
	}
	return int(n), nil
}

// safeName copies a name out of the segment, a word at a time (loadName);
// control characters, which could drive a terminal, become '?'.
func safeName(p *[NameLen]byte) string {
	b := loadName(p)
	out := []byte(cstring(b[:]))
	for i, c := range out {
		if c < ' ' || c == 0x7f {
			out[i] = '?'
		}
	}
	return string(out)
}

// slots says which table slot each pin and parameter of a snapshot was
// read from: deleted entries leave free slots, which read skips.
type slots struct {
	pins, params []int
}

func (d *Data) read() (DataSnapshot, error) {
	s, _, err := d.readSlots()
	return s, err
}

func (d *Data) readSlots() (DataSnapshot, slots, error) {
	var at slots
	s, err := d.readInto(&at)
	return s, at, err
}

func (d *Data) readInto(at *slots) (DataSnapshot, error) {
	l := d.l
	h := &l.Header
	if err := checkDataHeader(h, false); err != nil {
		return DataSnapshot{}, err
	}
	s := DataSnapshot{HostPID: int(atomic.LoadInt64(&h.HostPID)), HostClosed: atomic.LoadInt64(&h.Closed) != 0}
	nc, err := count(&h.NComps, MaxComps, "component")
	if err != nil {
		return s, err
	}
	np, err := count(&h.NPins, MaxPins, "pin")
	if err != nil {
		return s, err
	}
	nq, err := count(&h.NParams, MaxParams, "parameter")
	if err != nil {
		return s, err
	}
	ns, err := count(&h.NSignals, MaxSignals, "signal")
	if err != nil {
		return s, err
	}
	for i := range nc {
		e := &l.Comps[i]
		s.Comps = append(s.Comps, CompInfo{Name: safeName(&e.Name), PID: int(atomic.LoadInt64(&e.PID)), Ready: atomic.LoadUint32(&e.Ready) == 1})
	}
	owner := func(c uint16, what string) (string, error) {
		if int(c) >= nc {
			return "", corrupt("%s owned by component %d of %d", what, c, nc)
		}
		return s.Comps[c].Name, nil
	}
	sigIndex := make([]int, 0, ns) // live signals: index in s.Signals, or -1
	for i := range ns {
		e := &l.Signals[i]
		t, live, _, _, _ := unpackSigInfo(atomic.LoadUint64(&e.Info))
		if !live {
			sigIndex = append(sigIndex, -1)
			continue
		}
		if !t.valid() {
			return s, corrupt("signal %d has type %d", i, t)
		}
		sigIndex = append(sigIndex, len(s.Signals))
		s.Signals = append(s.Signals, SignalInfo{Name: safeName(&e.Name), Type: t, Value: atomic.LoadUint64(&e.Value), slot: i})
	}
	for i := range np {
		e := &l.Pins[i]
		m := loadMeta(&e.Comp)
		if m == (entryMeta{}) {
			continue // a free slot
		}
		p := PinInfo{Name: safeName(&e.Name), Type: Type(m.Type), Dir: Dir(m.Dir)}
		if !p.Type.valid() || p.Dir < In || p.Dir > IO {
			return s, corrupt("pin %d has type %d, direction %d", i, p.Type, p.Dir)
		}
		if p.Owner, err = owner(m.Comp, "pin "+p.Name); err != nil {
			return s, err
		}
		p.Value = atomic.LoadUint64(&e.Value)
		if link := atomic.LoadUint32(&e.Signal); link != 0 {
			if int64(link) > int64(ns) || sigIndex[link-1] < 0 {
				return s, corrupt("pin %q linked to signal %d of %d", p.Name, link, ns)
			}
			sig := &s.Signals[sigIndex[link-1]]
			if sig.Type != p.Type {
				return s, corrupt("pin %q of type %v linked to signal %q of type %v", p.Name, p.Type, sig.Name, sig.Type)
			}
			p.Signal = sig.Name
			p.Value = sig.Value
			sig.Pins = append(sig.Pins, p.Name)
			sig.Dirs = append(sig.Dirs, p.Dir)
			if p.Dir == Out {
				sig.Writer = p.Name
			}
		}
		s.Pins = append(s.Pins, p)
		at.pins = append(at.pins, i)
	}
	for i := range nq {
		e := &l.Params[i]
		m := loadMeta(&e.Comp)
		if m == (entryMeta{}) {
			continue // a free slot
		}
		p := ParamInfo{Name: safeName(&e.Name), Type: Type(m.Type), Dir: ParamDir(m.Dir), Value: atomic.LoadUint64(&e.Value)}
		if !p.Type.valid() || p.Dir < RO || p.Dir > RW {
			return s, corrupt("parameter %d has type %d, direction %d", i, p.Type, p.Dir)
		}
		if p.Owner, err = owner(m.Comp, "parameter "+p.Name); err != nil {
			return s, err
		}
		s.Params = append(s.Params, p)
		at.params = append(at.params, i)
	}
	return s, nil
}

// SetP sets a parameter, or a pin no signal drives, with one atomic store
// into the segment (halcmd setp), under HAL.SetP's rules.
func (d *Data) SetP(name, value string) error {
	return d.guard("setp", func() error {
		if d.seg != nil && d.seg.ReadOnly() {
			return errReadOnly
		}
		s, at, err := d.readSlots()
		if err != nil {
			return err
		}
		for i, p := range s.Params {
			if p.Name != name {
				continue
			}
			if p.Dir == RO {
				return fmt.Errorf("parameter %q is not writable: %w", name, rtapi.ErrInvalid)
			}
			w, err := ParseValue(p.Type, value)
			if err != nil {
				return fmt.Errorf("parameter %q: %w", name, err)
			}
			atomic.StoreUint64(&d.l.Params[at.params[i]].Value, w)
			return nil
		}
		for i, p := range s.Pins {
			if p.Name != name {
				continue
			}
			switch {
			case p.Dir == Out:
				return fmt.Errorf("pin %q is an OUT pin, not writable: %w", name, rtapi.ErrInvalid)
			case p.Signal != "":
				return fmt.Errorf("pin %q is connected to signal %q (use sets): %w", name, p.Signal, rtapi.ErrInvalid)
			}
			w, err := ParseValue(p.Type, value)
			if err != nil {
				return fmt.Errorf("pin %q: %w", name, err)
			}
			atomic.StoreUint64(&d.l.Pins[at.pins[i]].Value, w)
			return nil
		}
		return fmt.Errorf("pin or parameter %q does not exist: %w", name, rtapi.ErrInvalid)
	})
}

// SetS sets a signal no Out pin drives, with one atomic store (halcmd sets).
func (d *Data) SetS(name, value string) error {
	return d.guard("sets", func() error {
		if d.seg != nil && d.seg.ReadOnly() {
			return errReadOnly
		}
		s, err := d.read()
		if err != nil {
			return err
		}
		idx := -1
		for i := range len(s.Signals) {
			if s.Signals[i].Name == name {
				idx = i
			}
		}
		if idx < 0 {
			return fmt.Errorf("signal %q does not exist: %w", name, rtapi.ErrInvalid)
		}
		sig := s.Signals[idx]
		if sig.Writer != "" {
			return fmt.Errorf("signal %q already has writer pin %q: %w", name, sig.Writer, rtapi.ErrInvalid)
		}
		w, err := ParseValue(sig.Type, value)
		if err != nil {
			return fmt.Errorf("signal %q: %w", name, err)
		}
		atomic.StoreUint64(&d.l.Signals[sig.slot].Value, w)
		return nil
	})
}

// Close detaches. A second Close returns ErrClosed.
func (d *Data) Close() error {
	if d.closed {
		return &Error{Op: "data close", Err: rtapi.ErrClosed}
	}
	d.closed = true
	if d.seg != nil {
		if err := d.seg.Close(); err != nil && !errors.Is(err, shm.ErrClosed) {
			return fmt.Errorf("hal: data close: %w", err)
		}
	}
	return nil
}
