package hal

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gortapi/gortapi/internal/names"
	"github.com/gortapi/gortapi/rtapi"
)

// Factory makes a component's instances on h from a loadrt line's
// arguments (LinuxCNC's rtapi_app_main). It runs in set-up code.
type Factory func(h *HAL, args *LoadArgs) error

var registry = struct {
	sync.Mutex
	m map[string]Factory
}{m: map[string]Factory{}}

// Register makes a component loadable by name ("loadrt NAME"), usually
// from a package's init (rtapi/hal/comps). Components are compiled in: Go
// has no dlopen without cgo. A duplicate name or nil factory panics.
func Register(name string, f Factory) {
	if f == nil {
		panic("hal: Register called with a nil Factory for " + name)
	}
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.m[name]; dup {
		panic("hal: Register called twice for " + name)
	}
	registry.m[name] = f
}

// Registered lists the names Register was called with, sorted.
func Registered() []string {
	registry.Lock()
	defer registry.Unlock()
	return slices.Sorted(maps.Keys(registry.m))
}

// MaxInstances bounds count= and names= of a loadrt line.
const MaxInstances = 64

// LoadArgs are a loadrt line's KEY=VALUE arguments. A factory takes what
// it knows with Get, Int or Instances; LoadRT refuses a line with an
// argument no one took.
type LoadArgs struct {
	Name string // the component's registered name
	vals map[string]string
	used map[string]bool
}

// Get returns the argument key and whether it was given.
func (a *LoadArgs) Get(key string) (string, bool) {
	v, ok := a.vals[key]
	a.used[key] = true
	return v, ok
}

// Int returns the argument key as an integer, def when it was not given.
func (a *LoadArgs) Int(key string, def int64) (int64, error) {
	v, ok := a.Get(key)
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 0, 64)
	if err != nil {
		return 0, fmt.Errorf("loadrt %s: %s=%q is not an integer: %w", a.Name, key, v, rtapi.ErrInvalid)
	}
	return n, nil
}

// Instances returns the instance names of a component as LinuxCNC makes
// them: count=N (or num_chan=N) gives NAME.0 ... NAME.N-1, names=a,b gives
// a and b, neither gives def instances; count=0 and an empty names= count
// as not given, as in LinuxCNC. count and names together, a count outside
// 0..MaxInstances, or a bad or duplicate name are refused.
func (a *LoadArgs) Instances(def int) ([]string, error) {
	count, hasCount := a.Get("count")
	if n, ok := a.Get("num_chan"); ok {
		if hasCount {
			return nil, fmt.Errorf("loadrt %s: count= and num_chan= are the same: %w", a.Name, rtapi.ErrInvalid)
		}
		count, hasCount = n, true
	}
	given, hasNames := a.Get("names")
	// LinuxCNC tests `!count && !names[0]`: 0 and "" are not given.
	if hasCount {
		if n, err := strconv.ParseInt(count, 0, 64); err == nil && n == 0 {
			hasCount = false
		}
	}
	hasNames = hasNames && given != ""
	switch {
	case hasCount && hasNames:
		return nil, fmt.Errorf("loadrt %s: count= and names= exclude each other: %w", a.Name, rtapi.ErrInvalid)
	case hasNames:
		list := strings.Split(given, ",")
		if len(list) > MaxInstances {
			return nil, fmt.Errorf("loadrt %s: %d names, at most %d: %w", a.Name, len(list), MaxInstances, rtapi.ErrInvalid)
		}
		for i, n := range list {
			if err := names.Check("instance", n); err != nil {
				return nil, fmt.Errorf("loadrt %s: %w (%w)", a.Name, err, rtapi.ErrInvalid)
			}
			if slices.Contains(list[:i], n) {
				return nil, fmt.Errorf("loadrt %s: name %q given twice: %w", a.Name, n, rtapi.ErrInvalid)
			}
		}
		return list, nil
	}
	n := int64(def)
	if hasCount {
		var err error
		if n, err = strconv.ParseInt(count, 0, 64); err != nil || n < 1 || n > MaxInstances {
			return nil, fmt.Errorf("loadrt %s: count=%q: want 0 to %d: %w", a.Name, count, MaxInstances, rtapi.ErrInvalid)
		}
	}
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s.%d", a.Name, i)
	}
	return out, nil
}

// LoadRT instantiates a registered component (halcmd loadrt) with
// KEY=VALUE args, e.g. "count=2". An unknown component or an argument it
// does not take is ErrInvalid. It is all or nothing: when the factory or
// the argument check fails, the components, pins, parameters, functions,
// threads and segments it made are removed and their slots freed, so
// the corrected line loads. LoadRT calls run one at a time; anything
// else made from another goroutine while a failing one runs may be
// removed with it.
func (h *HAL) LoadRT(name string, args ...string) error {
	registry.Lock()
	f, ok := registry.m[name]
	registry.Unlock()
	if !ok {
		return errf("loadrt", "", "", rtapi.ErrInvalid, "no component %q is compiled in (have %s)", name, strings.Join(Registered(), ", "))
	}
	la := &LoadArgs{Name: name, vals: map[string]string{}, used: map[string]bool{}}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return errf("loadrt", "", "", rtapi.ErrInvalid, "%s: argument %q is not KEY=VALUE", name, a)
		}
		if _, dup := la.vals[k]; dup {
			return errf("loadrt", "", "", rtapi.ErrInvalid, "%s: argument %q given twice", name, k)
		}
		la.vals[k] = v
	}
	h.loadMu.Lock()
	defer h.loadMu.Unlock()
	if err := h.lockOpen("loadrt"); err != nil {
		return err
	}
	mark := loadMark{comps: h.born, functs: len(h.order), threads: len(h.threads), segs: len(h.segs), safe: h.safeSeq}
	h.nextCompID(loadrtIDs)
	h.mu.Unlock()
	err := f(h, la)
	if err == nil {
		for _, k := range slices.Sorted(maps.Keys(la.vals)) {
			if !la.used[k] {
				err = errf("loadrt", "", "", rtapi.ErrInvalid, "%s: unknown argument %q", name, k)
				break
			}
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		if uerr := h.undoLoad(mark); uerr != nil {
			return errors.Join(err, fmt.Errorf("loadrt %s: undoing it: %w", name, uerr))
		}
		return err
	}
	h.loaded = append(h.loaded, append([]string{name}, args...))
	h.recordModule(name, mark)
	return nil
}

// loadMark is how many components were made, and how many exported
// functions, threads and segments there were, before a loadrt: undoLoad
// removes those after.
type loadMark struct {
	comps                 uint64
	functs, threads, segs int
	safe                  uint64 // h.safeSeq
}

// undoLoad removes what a refused loadrt made since m. Called with h.mu.
func (h *HAL) undoLoad(m loadMark) error {
	const op = "loadrt"
	if h.closed {
		return nil
	}
	var errs []error
	if m.functs < len(h.order) {
		made := slices.Clone(h.order[m.functs:])
		if err := h.unchainFuncts(made); err != nil {
			errs = append(errs, err)
		}
		h.dropFuncts(made)
	}
	if m.threads < len(h.threads) {
		for _, th := range h.threads[m.threads:] {
			for _, f := range th.chain.Load().functs {
				f.thread = nil
			}
			if th.task != nil {
				if err := th.task.Delete(); err != nil && !errors.Is(err, rtapi.ErrClosed) {
					errs = append(errs, err)
				}
			}
		}
		h.threads = h.threads[:m.threads]
		if len(h.threads) == 0 {
			h.base = 0
		}
		h.assignPriorities()
		if h.pub != nil {
			h.pub.setThreads(len(h.threads), h.base)
		}
	}
	h.dropSafeStates(func(s safeState) bool { return s.seq > m.safe })
	if err := h.removeComps(func(c *Component) bool { return c.born >= m.comps }, op); err != nil {
		errs = append(errs, err)
	}
	for _, seg := range h.segs[m.segs:] {
		if err := seg.Delete(); err != nil {
			errs = append(errs, err)
		}
	}
	h.segs = h.segs[:m.segs]
	return errors.Join(errs...)
}
