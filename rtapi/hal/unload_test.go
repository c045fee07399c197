package hal_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
	"github.com/gortapi/gortapi/rtapi/sim"
)

// unloadProbe counts what a loaded "tunload" does: its function's calls,
// its exit hook's runs, and calls after the hook ran.
type unloadProbe struct {
	calls, exits, late atomic.Int64
	safes, lateSafes   atomic.Int64 // its safe state's runs, after the hook
	// hold makes the next call close inside and wait for release.
	hold            atomic.Bool
	inside, release chan struct{}
}

var (
	unloadProbes   sync.Map // probe=NAME → *unloadProbe
	unloadRegister sync.Once
)

// registerUnloadComp registers, once, "tunload" (component NAME, name=
// NAME, default tunload): pins NAME.in, NAME.out, parameter NAME.gain,
// function NAME.update (out = in*gain), thread= a thread of its own,
// safe=THREAD a safe state on THREAD, an exit hook; fail= refuses the
// load after making all that; probe=KEY counts into probe(KEY).
func registerUnloadComp() {
	unloadRegister.Do(func() {
		hal.Register("tunload", func(h *hal.HAL, a *hal.LoadArgs) error {
			name, ok := a.Get("name")
			if !ok {
				name = "tunload"
			}
			key, _ := a.Get("probe")
			thread, _ := a.Get("thread")
			v, _ := unloadProbes.LoadOrStore(key, &unloadProbe{})
			pr := v.(*unloadProbe)
			c, err := h.NewComponent(name)
			if err != nil {
				return err
			}
			in := c.Float(name+".in", hal.In)
			out := c.Float(name+".out", hal.Out)
			gain := c.FloatParam(name+".gain", hal.RW)
			var exited atomic.Bool
			c.Export(name+".update", func(time.Duration, int64) {
				pr.calls.Add(1)
				if pr.hold.CompareAndSwap(true, false) {
					close(pr.inside)
					<-pr.release
				}
				if exited.Load() {
					pr.late.Add(1)
				}
				out.Set(in.Get() * gain.Get())
			})
			c.OnExit(func() { exited.Store(true); pr.exits.Add(1) })
			if thread != "" {
				if _, err := h.NewThread(thread, time.Millisecond); err != nil {
					return err
				}
			}
			if safe, ok := a.Get("safe"); ok {
				err := h.AddSafeState(safe, name, func() {
					pr.safes.Add(1)
					if exited.Load() {
						pr.lateSafes.Add(1)
					}
				})
				if err != nil {
					return err
				}
			}
			if _, ok := a.Get("fail"); ok {
				return fmt.Errorf("tunload: told to fail: %w", rtapi.ErrInvalid)
			}
			return c.Ready()
		})
	})
}

var probeSeq atomic.Int64

// probeKey is a probe key of its own for this run of t (go test -count).
func probeKey(t *testing.T) string { return fmt.Sprintf("%s#%d", t.Name(), probeSeq.Add(1)) }

func probe(key string) *unloadProbe {
	v, _ := unloadProbes.LoadOrStore(key, &unloadProbe{})
	return v.(*unloadProbe)
}

// unloadrt removes the component, its pins, parameter and function; its
// pins leave their signals, which stay; its exit hook runs once; a
// thread calls its function no more; the name loads again (issue #40).
func TestUnloadrtRemovesTheComponent(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	registerUnloadComp()
	h, clock := openSim(t)
	p := twoComps(t, h)
	key := probeKey(t)
	pr := probe(key)
	require.NoError(t, exec(t, h, "loadrt tunload probe="+key+" thread=servo"))
	require.NoError(t, exec(t, h, "loadrt tunload name=other probe="+key+"-other"))
	require.NoError(t, exec(t, h, "net x a.out tunload.in"))
	require.NoError(t, exec(t, h, "net y tunload.out b.in"))
	require.NoError(t, exec(t, h, "setp tunload.gain 2"))
	require.NoError(t, exec(t, h, "addf tunload.update servo"))
	require.NoError(t, exec(t, h, "addf other.update servo"))
	require.NoError(t, h.Start())
	p.outF.Set(1.5)
	require.NoError(t, clock.Advance(3*time.Millisecond))
	require.Positive(t, pr.calls.Load())
	assert.Equal(t, 3.0, p.inF.Get())

	require.NoError(t, exec(t, h, "unloadrt other"))
	assert.Equal(t, int64(1), probe(key+"-other").exits.Load())
	assert.Zero(t, pr.exits.Load(), "only other's hook")
	th, ok := h.Thread("servo")
	require.True(t, ok)
	assert.Equal(t, []string{"tunload.update"}, th.Functs())
	_, ok = h.Funct("other.update")
	assert.False(t, ok)
	_, err := h.GetP("other.gain")
	assert.Error(t, err)

	s, err := h.View().Read()
	require.NoError(t, err)
	for _, c := range s.Comps {
		assert.NotEqual(t, "other", c.Name)
	}
	// unloadrt of tunload, whose thread is servo: the thread goes too.
	require.NoError(t, exec(t, h, "unloadrt tunload"))
	assert.Equal(t, int64(1), pr.exits.Load())
	assert.Zero(t, pr.late.Load())
	_, ok = h.Thread("servo")
	assert.False(t, ok)
	_, err = h.GetP("tunload.in")
	assert.Error(t, err)
	sig, err := h.GetS("y")
	require.NoError(t, err, "its signals stay")
	assert.Equal(t, "3", sig)
	s, err = h.View().Read()
	require.NoError(t, err)
	for _, g := range s.Signals {
		assert.NotContains(t, g.Pins, "tunload.in")
		assert.NotContains(t, g.Pins, "tunload.out")
	}
	assert.NotContains(t, saveAll(t, h), "loadrt tunload")
	require.NoError(t, exec(t, h, "loadrt tunload probe="+key+" thread=servo"), "it loads again")
	require.NoError(t, exec(t, h, "net y tunload.out"))
}

func saveAll(t *testing.T, h *hal.HAL) string {
	t.Helper()
	var b stringsBuilder
	c, _, err := halfile.ParseLine("save")
	require.NoError(t, err)
	require.NoError(t, h.Exec(&b, c))
	return string(b)
}

type stringsBuilder []byte

func (b *stringsBuilder) Write(p []byte) (int, error) { *b = append(*b, p...); return len(p), nil }

// unloadrt's refusals are halcmd's, in its words; it takes one name;
// halcmd's lock does not refuse it, as in LinuxCNC.
func TestUnloadrtRefusals(t *testing.T) {
	key := probeKey(t)
	rttest.ParallelUnlessRT(t)
	registerUnloadComp()
	h, _ := openSim(t)
	err := exec(t, h, "unloadrt nope")
	require.ErrorIs(t, err, rtapi.ErrNotExist)
	assert.ErrorContains(t, err, "component 'nope' is not loaded")
	_, err = h.NewUserComponent("panel", 1)
	require.NoError(t, err)
	err = exec(t, h, "unloadrt panel")
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	assert.ErrorContains(t, err, "component 'panel' is not a realtime module")
	_, err = h.NewComponent("gocode")
	require.NoError(t, err)
	err = exec(t, h, "unloadrt gocode")
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	assert.ErrorContains(t, err, "gocode: not loaded")
	_, _, err = halfile.ParseLine("unloadrt a b")
	assert.ErrorContains(t, err, "unloadrt takes 1 arguments, not 2")
	require.NoError(t, exec(t, h, "unload panel"), "a user component is unloadusr's")

	require.NoError(t, exec(t, h, "loadrt tunload probe="+key))
	require.NoError(t, exec(t, h, "lock"))
	require.NoError(t, exec(t, h, "unloadrt tunload"), "LinuxCNC's unloadrt checks no lock")
	assert.Equal(t, int64(1), probe(key).exits.Load())
}

// unloadrt all and unload all unload every loadrt, newest first, and
// leave Go-made and user components.
func TestUnloadrtAll(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	registerUnloadComp()
	for _, verb := range []string{"unloadrt", "unload"} {
		h, _ := openSim(t)
		key := probeKey(t) + verb
		require.NoError(t, exec(t, h, "loadrt tunload name=first probe="+key+"1 thread=servo"))
		require.NoError(t, exec(t, h, "loadrt tunload name=second probe="+key+"2"))
		require.NoError(t, exec(t, h, "addf second.update servo"))
		_, err := h.NewComponent("gocode")
		require.NoError(t, err)
		require.NoError(t, exec(t, h, verb+" all"))
		assert.Equal(t, int64(1), probe(key+"1").exits.Load())
		assert.Equal(t, int64(1), probe(key+"2").exits.Load())
		s, err := h.View().Read()
		require.NoError(t, err)
		var left []string
		for _, c := range s.Comps {
			left = append(left, c.Name)
		}
		assert.Equal(t, []string{"gocode"}, left, verb)
		assert.Empty(t, h.Threads())
		assert.Empty(t, h.Functs())
	}
}

// Loading and unloading 2000 times, with a thread and a function on it,
// leaves no slot behind: the tables hold as many as before (as
// TestDelsigFreesTheSlot for signals).
func TestLoadUnloadFreesTheSlots(t *testing.T) {
	key := probeKey(t)
	rttest.ParallelUnlessRT(t)
	registerUnloadComp()
	h, _ := openSim(t)
	require.NoError(t, h.NewSignal("keep", hal.TypeFloat))
	for i := range 2000 {
		require.NoError(t, exec(t, h, "loadrt tunload thread=servo probe="+key), "cycle %d", i)
		require.NoError(t, exec(t, h, "addf tunload.update servo"), "cycle %d", i)
		require.NoError(t, exec(t, h, "net keep tunload.in"), "cycle %d", i)
		require.NoError(t, exec(t, h, "unloadrt tunload"), "cycle %d", i)
	}
	assert.Equal(t, int64(2000), probe(key).exits.Load())
	require.NoError(t, exec(t, h, "loadrt tunload thread=servo"))
	s, err := h.View().Read()
	require.NoError(t, err)
	assert.Len(t, s.Comps, 2, "tunload and its thread's __servo: %v", s.Comps)
	assert.Len(t, s.Pins, 5, "in, out, update.time, servo.time, servo.threadbeat: %v", s.Pins)
	assert.Len(t, h.Functs(), 1)
	// Every table can still be filled to its limit.
	for i := range hal.MaxExported - 1 {
		_, err := h.Export(fmt.Sprintf("f%d", i), nop)
		require.NoError(t, err, "function %d", i)
	}
}

// A running thread no longer calls the function of a component unloaded
// while it runs: UnloadRT returns after the thread left it, and the exit
// hook runs after that.
func TestUnloadrtWhileRunning(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	registerUnloadComp()
	h := newHAL(t, hal.Options{})
	servo, err := h.NewThread("servo", time.Millisecond)
	require.NoError(t, err)
	key := probeKey(t)
	require.NoError(t, exec(t, h, "loadrt tunload probe="+key))
	require.NoError(t, exec(t, h, "addf tunload.update servo"))
	require.NoError(t, h.Start())
	waitBeat(t, servo, 3)
	require.NoError(t, h.UnloadRT("tunload"))
	calls := probe(key).calls.Load()
	beat := servo.Stats().Beat
	waitBeat(t, servo, beat+3)
	assert.Equal(t, calls, probe(key).calls.Load(), "called after unloadrt returned")
	assert.Zero(t, probe(key).late.Load(), "called after its exit hook")
	assert.Equal(t, int64(1), probe(key).exits.Load())
	stopLoaded(t, h)
}

// unloadrt removes the safe states its loadrt registered on other
// threads, and safep's on its pins: none runs after its exit hook
// released what they drive (hal_gpio closes its lines there).
func TestUnloadrtDropsItsSafeStates(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	registerUnloadComp()
	h, clock := openSim(t)
	servo, err := h.NewThread("servo", time.Millisecond)
	require.NoError(t, err)
	key := probeKey(t)
	require.NoError(t, exec(t, h, "loadrt tunload safe=servo probe="+key))
	require.NoError(t, exec(t, h, "loadrt tunload name=other safe=servo probe="+key+"-other"))
	require.NoError(t, exec(t, h, "safep servo tunload.out 1"))
	require.NoError(t, exec(t, h, "safep servo other.out 2"))
	assert.Equal(t, []string{"tunload", "other", "tunload.out", "other.out"}, servo.SafeStates())

	require.NoError(t, exec(t, h, "unloadrt tunload"))
	assert.Equal(t, []string{"other", "other.out"}, servo.SafeStates())
	require.NoError(t, h.Start())
	require.NoError(t, clock.Advance(2*time.Millisecond))
	require.NoError(t, h.Stop())
	assert.Zero(t, probe(key).safes.Load(), "the unloaded component's safe state ran")
	assert.Equal(t, int64(1), probe(key+"-other").safes.Load(), "the other's ran at Stop")
}

// The aliases of an unloaded component's pins and parameters go with
// them, as hal_exit frees a pin's alias with the pin: the names are free
// again, and the component loaded again has none.
func TestUnloadrtDropsItsAliases(t *testing.T) {
	key := probeKey(t)
	rttest.ParallelUnlessRT(t)
	registerUnloadComp()
	h, _ := openSim(t)
	require.NoError(t, exec(t, h, "loadrt tunload probe="+key))
	require.NoError(t, exec(t, h, "alias pin tunload.in myin"))
	require.NoError(t, exec(t, h, "alias param tunload.gain mygain"))
	require.NoError(t, exec(t, h, "unloadrt tunload"))
	require.NoError(t, exec(t, h, "loadrt tunload probe="+key))
	_, err := h.GetP("myin")
	assert.Error(t, err, "the reloaded pin has no alias")
	v, err := h.GetP("tunload.gain")
	require.NoError(t, err)
	assert.Equal(t, "0", v)
	require.NoError(t, exec(t, h, "alias pin tunload.out myin"), "the alias name is free again")
	require.NoError(t, exec(t, h, "alias param tunload.gain mygain"))
	assert.Contains(t, saveAll(t, h), "alias pin tunload.out myin")
	assert.NotContains(t, saveAll(t, h), "tunload.in myin")
}

// A viewer of the stats segment reads a running host across an
// unloadrt: until the thread publishes its new chain, its record still
// names the unloaded function's slot, which stays within the exported
// count (lowering it made the read fail as corrupt).
func TestUnloadrtKeepsTheStatsReadable(t *testing.T) {
	key := probeKey(t)
	rttest.ParallelUnlessRT(t)
	registerUnloadComp()
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 1}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close()) })
	dir := t.TempDir()
	const statsKey = 0x40
	h, err := hal.New(rt, hal.Options{StatsKey: statsKey, ShmDir: dir, PublishEvery: time.Nanosecond})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	clock, err := sim.New(rt)
	require.NoError(t, err)
	_, err = h.NewThread("servo", time.Millisecond)
	require.NoError(t, err)
	for _, n := range []string{"a", "b"} {
		require.NoError(t, exec(t, h, "loadrt tunload name="+n+" probe="+key))
		require.NoError(t, exec(t, h, "addf "+n+".update servo"))
	}
	require.NoError(t, h.Start())
	require.NoError(t, clock.Advance(2*time.Millisecond))
	v, err := hal.OpenView(hal.ViewOptions{StatsKey: statsKey, Instance: rt.Instance(), Dir: dir})
	require.NoError(t, err)
	t.Cleanup(func() { _ = v.Close() })
	s, err := v.Read()
	require.NoError(t, err)
	require.Len(t, s.Threads, 1)
	require.Len(t, s.Threads[0].Functs, 2)

	require.NoError(t, exec(t, h, "unloadrt b"))
	_, err = v.Read()
	require.NoError(t, err, "before the thread publishes its new chain")
	require.NoError(t, clock.Advance(2*time.Millisecond))
	s, err = v.Read()
	require.NoError(t, err)
	require.Len(t, s.Threads, 1)
	require.Len(t, s.Threads[0].Functs, 1)
	assert.Equal(t, "a.update", s.Threads[0].Functs[0].Name)
}

// unloadrt of a component whose function never returns times out, as
// RemoveFunct does, and removes nothing more: no exit hook runs while the
// call may still use what it releases. Once the call ends, unloadrt
// again completes.
func TestUnloadrtTimesOutOnARunawayFunction(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	registerUnloadComp()
	h := newHAL(t, hal.Options{StopTimeout: 20 * time.Millisecond})
	servo, err := h.NewThread("servo", time.Millisecond)
	require.NoError(t, err)
	key := probeKey(t)
	pr := probe(key)
	pr.inside, pr.release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(pr.release) }) }
	t.Cleanup(free) // before Close, should the test fail
	require.NoError(t, exec(t, h, "loadrt tunload probe="+key))
	require.NoError(t, exec(t, h, "addf tunload.update servo"))
	require.NoError(t, h.Start())
	waitBeat(t, servo, 2)
	pr.hold.Store(true)
	<-pr.inside

	err = h.UnloadRT("tunload")
	require.ErrorIs(t, err, rtapi.ErrTimeout)
	assert.Contains(t, err.Error(), "nothing was unloaded")
	assert.Zero(t, pr.exits.Load(), "no exit hook under a running call")
	_, err = h.GetP("tunload.gain")
	assert.NoError(t, err, "the component stays")

	free()
	rttest.WaitFor(t, "the held call to end and unloadrt to pass", func() bool { return h.UnloadRT("tunload") == nil })
	assert.Equal(t, int64(1), pr.exits.Load())
	assert.Zero(t, pr.late.Load())
	stopLoaded(t, h)
}

// A refused loadrt removes the safe states it registered, as unloadrt
// does: its exit hooks ran, and a safe state left behind would drive
// what they released.
func TestRefusedLoadrtDropsItsSafeStates(t *testing.T) {
	key := probeKey(t)
	rttest.ParallelUnlessRT(t)
	registerUnloadComp()
	h, clock := openSim(t)
	servo, err := h.NewThread("servo", time.Millisecond)
	require.NoError(t, err)
	require.Error(t, exec(t, h, "loadrt tunload safe=servo fail=1 probe="+key))
	assert.Equal(t, int64(1), probe(key).exits.Load(), "the refused load's hooks ran")
	assert.Empty(t, servo.SafeStates())
	require.NoError(t, h.Start())
	require.NoError(t, clock.Advance(2*time.Millisecond))
	require.NoError(t, h.Stop())
	assert.Zero(t, probe(key).safes.Load())
}

// A user-space component's removal (its process ended) drops the
// aliases of its pins, as hal_exit frees them: the component joining
// again has none, and the alias name is free. safep's on its pins go.
func TestRemovedUserComponentDropsItsAliases(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h, _ := openSim(t)
	servo, err := h.NewThread("servo", time.Millisecond)
	require.NoError(t, err)
	for i := range 2 {
		c, err := h.NewUserComponent("panel", 4242)
		require.NoError(t, err)
		c.Pin("panel.knob", hal.TypeFloat, hal.Out)
		require.NoError(t, c.Ready())
		_, err = h.GetP("knob")
		assert.Error(t, err, "round %d: no alias yet", i)
		require.NoError(t, exec(t, h, "alias pin panel.knob knob"), "round %d", i)
		require.NoError(t, exec(t, h, "safep servo panel.knob 0"), "round %d", i)
		require.NoError(t, c.Remove())
		assert.Empty(t, servo.SafeStates(), "round %d: safep's on its pin go with it", i)
	}
}
