package hal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// ViewOptions say which running host's segments a View reads.
type ViewOptions struct {
	// DataKey is the host's Options.DataKey: its components, pins,
	// parameters and signals. 0 reads none.
	DataKey uint32
	// StatsKey is the host's Options.StatsKey: its threads and functions.
	// 0 reads none.
	StatsKey uint32
	// Instance is the host's rtapi instance number.
	Instance int
	// Dir is the segment directory; "" means /dev/shm.
	Dir string
	// Group and AllowUIDs say whose segments are trusted besides this
	// user's and root's (rtapi.Options.ShmGroup, ShmAllowUIDs): another
	// user's viewer names the host's Options.ShmGroup or uid.
	Group     string
	AllowUIDs []int
}

// View reads a running HAL, read-only: its components, pins, parameters
// and signals from the data segment, its threads from the stats segment,
// from another process (OpenView: halmon, a GUI) or the host (HAL.View).
// It never takes a lock the threads could wait on, and it changes
// nothing: commands go to the host's socket (package halctl). The
// segments are untrusted input: a corrupt or hostile one gives
// ErrCorrupt, never a panic, an access outside it or an endless loop; one
// truncated under the view gives shm.ErrTruncated instead of SIGBUS. A
// View is for one goroutine at a time.
type View struct {
	host   *HAL         // HAL.View: the host's own tables, else nil
	dseg   *shm.Segment // the data segment, nil without DataKey or for host
	dl     *dataLayout
	sseg   *shm.Segment // the stats segment, nil without StatsKey
	sl     *statsLayout
	rec    threadRecord // Read's copy of one thread's record
	closed bool
}

// Snapshot is what View.Read returns: the host, its threads and its data
// tables, each part empty when its segment is not read. Names come from
// the segments with control characters replaced by '?'.
type Snapshot struct {
	HostPID    int
	HostClosed bool // the host closed its HAL; the values are final
	BasePeriod time.Duration
	Threads    []ThreadStats
	Comps      []CompInfo
	Pins       []PinInfo
	Params     []ParamInfo
	Signals    []SignalInfo
}

// CompInfo describes a component.
type CompInfo struct {
	Name  string
	PID   int
	Ready bool
	User  bool // a user-space component (NewUserComponent); in a View: its PID is not the host's
	ID    int  // its id, LinuxCNC's comp_id: show's ID and Owner columns
}

// PinInfo describes a pin and its value.
type PinInfo struct {
	Owner   string // the component
	OwnerID int    // its id (CompInfo.ID)
	Name    string
	Type    Type
	Dir     Dir
	Value   uint64 // the word the pin reads: its signal's when linked
	Signal  string // "" when unlinked
}

// ParamInfo describes a parameter and its value.
type ParamInfo struct {
	Owner   string
	OwnerID int // its id (CompInfo.ID)
	Name    string
	Type    Type
	Dir     ParamDir
	Value   uint64
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

// OpenView attaches, read-only, to the segments of a running host that
// o names (at least one key). Errors: a missing segment matches
// os.ErrNotExist; one owned or writable by an untrusted user
// (ViewOptions.Group) shm.ErrUntrusted; one not of this build's layout
// rtapi.ErrInvalid (and ErrCorrupt if only its header is wrong); one
// whose header is not written yet shm.ErrNotInitialised.
func OpenView(o ViewOptions) (*View, error) {
	const op = "open view"
	if o.DataKey == 0 && o.StatsKey == 0 {
		return nil, errf(op, "", "", rtapi.ErrInvalid, "a data or stats segment key is required")
	}
	v := &View{}
	var err error
	if o.DataKey != 0 {
		v.dseg, v.dl, err = attachView[dataLayout](o, o.DataKey, "data", func(l *dataLayout) error { return checkDataHeader(&l.Header, true) })
	}
	if err == nil && o.StatsKey != 0 {
		v.sseg, v.sl, err = attachView[statsLayout](o, o.StatsKey, "stats", func(l *statsLayout) error { return checkStatsHeader(&l.Header, true) })
	}
	if err != nil {
		v.Close()
		return nil, &Error{Op: op, Err: err}
	}
	return v, nil
}

// attachView attaches the segment of key read-only and checks that it
// holds a T whose header passes check.
func attachView[T any](o ViewOptions, key uint32, kind string, check func(*T) error) (*shm.Segment, *T, error) {
	seg, err := shm.Attach(shm.Options{Dir: o.Dir, Instance: o.Instance, Group: o.Group, AllowUIDs: o.AllowUIDs, ReadOnly: true}, key)
	if errors.Is(err, shm.ErrInvalid) {
		err = fmt.Errorf("%w (%w)", err, rtapi.ErrInvalid)
	}
	if err != nil {
		return nil, nil, err
	}
	var layout *T
	size := int(unsafe.Sizeof(*layout)) // not evaluated: no T is made

	l, err := shm.View[T](seg, 0)
	switch {
	case seg.Size() != size:
		err = fmt.Errorf("segment %s is not a HAL %s segment of this build: it holds %d bytes, not %d: %w",
			seg.Name(), kind, seg.Size(), size, rtapi.ErrInvalid)
	case err == nil:
		var herr error
		if err = seg.Guard(func() { herr = check(l) }); err == nil && herr != nil {
			err = fmt.Errorf("segment %s: %w", seg.Name(), herr)
		}
	}
	if err != nil {
		seg.Close()
		return nil, nil, err
	}
	return seg, l, nil
}

// View returns a reader of the HAL's own tables and threads, the view
// OpenView gives another process; it keeps working after a truncation
// (HAL.DataErr). After Close its Read returns ErrClosed.
func (h *HAL) View() *View {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.repairData()
	return &View{host: h, dl: h.data.l, closed: h.closed}
}

// HostGone reports whether the host is gone: it closed its HAL, its
// process died, a segment's name was unlinked, or a segment was
// truncated under this view. A viewer then closes and opens again to
// follow a restarted host. It makes a few system calls.
func (v *View) HostGone() bool {
	switch {
	case v.closed:
		return true
	case v.host != nil:
		var c int64
		v.host.data.access(func() { c = atomic.LoadInt64(&v.dl.Header.Closed) })
		return c != 0
	}
	return v.dseg != nil && segmentGone(v.dseg, func() int64 { return atomic.LoadInt64(&v.dl.Header.Closed) }) ||
		v.sseg != nil && segmentGone(v.sseg, v.statsClosed)
}

// HostPID is the pid of the host that created the segments, as they said
// at open (this process for HAL.View).
func (v *View) HostPID() int {
	switch {
	case v.dseg != nil:
		return v.dseg.CreatorPID()
	case v.sseg != nil:
		return v.sseg.CreatorPID()
	}
	return os.Getpid()
}

// segmentGone reports whether the host of seg is gone: closed (loaded
// under the guard, since taking a field's address touches the mapping),
// dead, its segment unlinked, or truncated under this attachment.
func segmentGone(seg *shm.Segment, closed func() int64) bool {
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

// maxGenTries bounds Read's retries while the host keeps changing links.
const maxGenTries = 100

// Read copies the threads' latest records and every component, pin,
// parameter and signal: the wiring as of one moment between changes, the
// values live. It allocates. On an error it returns an empty Snapshot.
func (v *View) Read() (Snapshot, error) {
	const op = "view read"
	if v.closed {
		return Snapshot{}, &Error{Op: op, Err: rtapi.ErrClosed}
	}
	var s Snapshot
	var err error
	if v.host != nil {
		v.host.data.access(func() { s, err = v.readItems() })
		if err == nil {
			s.BasePeriod, s.Threads = v.host.BasePeriod(), v.host.Stats()
		}
	} else {
		if v.sseg != nil {
			err = guarded(v.sseg, func() error { return v.readThreads(&s) })
		}
		if v.dseg != nil && err == nil {
			var items Snapshot
			err = guarded(v.dseg, func() (err error) { items, err = v.readItems(); return err })
			s.HostPID, s.HostClosed = items.HostPID, s.HostClosed || items.HostClosed
			s.Comps, s.Pins, s.Params, s.Signals = items.Comps, items.Pins, items.Params, items.Signals
		}
	}
	if err != nil {
		return Snapshot{}, &Error{Op: op, Err: err}
	}
	return s, nil
}

// guarded runs f over seg, turning a truncation, and the nonsense values
// past a truncated file's end, into shm.ErrTruncated.
func guarded(seg *shm.Segment, f func() error) error {
	var err error
	if gerr := seg.Guard(func() { err = f() }); gerr != nil {
		return gerr
	}
	if err != nil {
		if terr := seg.Check(); errors.Is(terr, shm.ErrTruncated) {
			err = terr
		}
	}
	return err
}

// readItems reads the data tables between two changes of the wiring.
func (v *View) readItems() (Snapshot, error) {
	for range maxGenTries {
		g := atomic.LoadUint64(&v.dl.Header.Gen)
		if g%2 == 0 {
			var s Snapshot
			err := readItems(v.dl, &s)
			if atomic.LoadUint64(&v.dl.Header.Gen) == g {
				return s, err // else a change ran under the read: a torn table is not corruption
			}
		}
	}
	return Snapshot{}, fmt.Errorf("the wiring changed during each of %d reads: %w", maxGenTries, rtapi.ErrBusy)
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

// readItems fills s's components, pins, parameters and signals from l;
// each shared value is loaded once and checked.
func readItems(l *dataLayout, s *Snapshot) error {
	h := &l.Header
	if err := checkDataHeader(h, false); err != nil {
		return err
	}
	s.HostPID, s.HostClosed = int(atomic.LoadInt64(&h.HostPID)), atomic.LoadInt64(&h.Closed) != 0
	nc, err := count(&h.NComps, MaxComps, "component")
	if err != nil {
		return err
	}
	np, err := count(&h.NPins, MaxPins, "pin")
	if err != nil {
		return err
	}
	nq, err := count(&h.NParams, MaxParams, "parameter")
	if err != nil {
		return err
	}
	ns, err := count(&h.NSignals, MaxSignals, "signal")
	if err != nil {
		return err
	}
	compNames := make([]string, nc) // by slot; "" a removed component's
	compIDs := make([]int, nc)
	for i := range nc {
		e := &l.Comps[i]
		compNames[i] = safeName(&e.Name)
		compIDs[i] = int(atomic.LoadUint32(&e.ID))
		if compNames[i] != "" {
			pid := int(atomic.LoadInt64(&e.PID))
			s.Comps = append(s.Comps, CompInfo{Name: compNames[i], PID: pid, Ready: atomic.LoadUint32(&e.Ready) == 1, User: pid != s.HostPID, ID: compIDs[i]})
		}
	}
	owner := func(c uint16, what string) (string, error) {
		if int(c) >= nc {
			return "", corrupt("%s owned by component %d of %d", what, c, nc)
		}
		return compNames[c], nil
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
			return corrupt("signal %d has type %d", i, t)
		}
		sigIndex = append(sigIndex, len(s.Signals))
		s.Signals = append(s.Signals, SignalInfo{Name: safeName(&e.Name), Type: t, Value: atomic.LoadUint64(&l.Values.Signals[i]), slot: i})
	}
	for i := range np {
		e := &l.Pins[i]
		m := loadMeta(&e.Comp)
		if m == (entryMeta{}) {
			continue // a free slot
		}
		p := PinInfo{Name: safeName(&e.Name), Type: Type(m.Type), Dir: Dir(m.Dir)}
		if !p.Type.valid() || p.Dir < In || p.Dir > IO {
			return corrupt("pin %d has type %d, direction %d", i, p.Type, p.Dir)
		}
		if p.Owner, err = owner(m.Comp, "pin "+p.Name); err != nil {
			return err
		}
		p.OwnerID = compIDs[m.Comp]
		p.Value = atomic.LoadUint64(&l.Values.Pins[i])
		if link := atomic.LoadUint32(&e.Signal); link != 0 {
			if int64(link) > int64(ns) || sigIndex[link-1] < 0 {
				return corrupt("pin %q linked to signal %d of %d", p.Name, link, ns)
			}
			sig := &s.Signals[sigIndex[link-1]]
			if sig.Type != p.Type {
				return corrupt("pin %q of type %v linked to signal %q of type %v", p.Name, p.Type, sig.Name, sig.Type)
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
	}
	for i := range nq {
		e := &l.Params[i]
		m := loadMeta(&e.Comp)
		if m == (entryMeta{}) {
			continue // a free slot
		}
		p := ParamInfo{Name: safeName(&e.Name), Type: Type(m.Type), Dir: ParamDir(m.Dir), Value: atomic.LoadUint64(&l.Values.Params[i])}
		if !p.Type.valid() || p.Dir < RO || p.Dir > RW {
			return corrupt("parameter %d has type %d, direction %d", i, p.Type, p.Dir)
		}
		if p.Owner, err = owner(m.Comp, "parameter "+p.Name); err != nil {
			return err
		}
		p.OwnerID = compIDs[m.Comp]
		s.Params = append(s.Params, p)
	}
	return nil
}

// Close detaches. A second Close returns ErrClosed.
func (v *View) Close() error {
	if v.closed {
		return &Error{Op: "view close", Err: rtapi.ErrClosed}
	}
	v.closed = true
	var err error
	for _, seg := range []*shm.Segment{v.dseg, v.sseg} {
		if seg != nil {
			if cerr := seg.Close(); cerr != nil && !errors.Is(cerr, shm.ErrClosed) {
				err = errors.Join(err, fmt.Errorf("hal: view close: %w", cerr))
			}
		}
	}
	return err
}

func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
