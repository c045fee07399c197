package comps

import (
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

func init() {
	hal.Register("encoder", loadEncoder)
}

// cMaxChan bounds num_chan= and names= of encoder and sim_encoder (their
// MAX_CHAN).
const cMaxChan = 8

// cChannels returns the instances of encoder or sim_encoder as their
// rtapi_app_main makes them: num_chan=N gives prefix.0 ... prefix.N-1;
// names=a,b gives a and b, up to the first empty name; num_chan=0 (or
// empty) is not given; neither gives def. Refused as there: num_chan and
// names together, a count outside 1..8, names= with more than 8 entries
// or an empty first one. num_chan is read as strtol base 0 and kept in a
// C int. count= is not taken (LoadRT refuses it as an unknown argument).
func cChannels(a *hal.LoadArgs, prefix string, def int) ([]string, error) {
	numChan := int32(0)
	if v, ok := a.Get("num_chan"); ok {
		n, err := cStrtol(v)
		if err != nil {
			return nil, fmt.Errorf("loadrt %s: `%s' invalid for parameter `num_chan=%s': %w", a.Name, v, v, rtapi.ErrInvalid)
		}
		numChan = int32(n)
	}
	given, hasNames := a.Get("names")
	var list []string
	if hasNames {
		list = strings.Split(given, ",")
		if len(list) > cMaxChan {
			return nil, fmt.Errorf("loadrt %s: names=%s: can only take %d arguments: %w", a.Name, given, cMaxChan, rtapi.ErrInvalid)
		}
	}
	if numChan != 0 && hasNames {
		return nil, fmt.Errorf("loadrt %s: num_chan= and names= are mutually exclusive: %w", a.Name, rtapi.ErrInvalid)
	}
	if numChan == 0 && !hasNames {
		numChan = int32(def)
	}
	howmany := numChan
	if numChan == 0 {
		for i, n := range list {
			if n == "" {
				break
			}
			howmany = int32(i + 1)
		}
	}
	if howmany <= 0 || howmany > cMaxChan {
		return nil, fmt.Errorf("loadrt %s: invalid number of channels: %d (1 to %d): %w", a.Name, howmany, cMaxChan, rtapi.ErrInvalid)
	}
	if numChan == 0 {
		return list[:howmany], nil
	}
	out := make([]string, howmany)
	for i := range out {
		out[i] = fmt.Sprintf("%s.%d", prefix, i)
	}
	return out, nil
}

// cStrtol is rtapi_app's reading of an int module parameter: C's strtol
// base 0 (leading white space, a sign, 0x for hex, 0 for octal; out of
// range gives LONG_MIN or LONG_MAX), refused unless it reads the whole
// string. The empty string is 0, as there.
func cStrtol(s string) (int64, error) {
	i := 0
	for i < len(s) && strings.IndexByte(" \t\n\v\f\r", s[i]) >= 0 {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	base := uint64(10)
	start := i
	if i+1 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') && i+2 < len(s) && hexDigit(s[i+2]) < 16 {
		base, i = 16, i+2
	} else if i < len(s) && s[i] == '0' {
		base = 8
	}
	var v uint64
	over := false
	digits := i
	for ; i < len(s); i++ {
		d := uint64(hexDigit(s[i]))
		if d >= base {
			break
		}
		if v > (math.MaxUint64-d)/base {
			over = true
		} else {
			v = v*base + d
		}
	}
	if i == digits { // no digits: strtol reads nothing, endp is s
		if start == 0 && len(s) == 0 {
			return 0, nil
		}
		return 0, rtapi.ErrInvalid
	}
	if i != len(s) {
		return 0, rtapi.ErrInvalid
	}
	switch {
	case neg && (over || v > 1<<63):
		return math.MinInt64, nil
	case neg:
		return -int64(v), nil
	case over || v > math.MaxInt64:
		return math.MaxInt64, nil
	}
	return int64(v), nil
}

func hexDigit(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'z':
		return c - 'a' + 10
	case c >= 'A' && c <= 'Z':
		return c - 'A' + 10
	}
	return 255
}

// cvttsd2si32 is C's (int) conversion of a double as x86-64's LinuxCNC
// build runs it: truncation toward zero, and 0x80000000 for NaN or a
// value out of range (where Go's own conversion is implementation
// defined).
func cvttsd2si32(f float64) int32 {
	if f > -2147483649 && f < 2147483648 {
		return int32(f)
	}
	return math.MinInt32
}

// loadEncoder is encoder's factory: num_chan=N or names=a,b, at most 8,
// default 3.
func loadEncoder(h *hal.HAL, a *hal.LoadArgs) error {
	names, err := cChannels(a, "encoder", 3)
	if err != nil {
		return err
	}
	c, err := h.NewComponent(a.Name)
	if err != nil {
		return err
	}
	e := newEncoder(c, names)
	c.Export("encoder.update-counters", e.update)
	c.Export("encoder.capture-position", e.capture)
	return c.Ready()
}

// Bits of the quadrature decoder's state (encoder.c's SM_* masks).
const (
	smPhaseAMask = 0x01
	smPhaseBMask = 0x02
	smLookupMask = 0x0F
	smCntUpMask  = 0x40
	smCntDnMask  = 0x80
)

// The decoder's lookup tables, encoder.c's lut_x4, lut_x1 and lut_ctr:
// indexed by the previous A and B (bits 2, 3) and the new ones (bits 0,
// 1), they give the next state and whether to count up (0x40) or down
// (0x80). A glitch on one input counts up then down; both inputs changing
// at once counts nothing and is not recorded anywhere.
var (
	encLutX4 = [16]uint8{
		0x00, 0x44, 0x88, 0x0C, 0x80, 0x04, 0x08, 0x4C,
		0x40, 0x04, 0x08, 0x8C, 0x00, 0x84, 0x48, 0x0C,
	}
	encLutX1 = [16]uint8{
		0x00, 0x44, 0x08, 0x0C, 0x80, 0x04, 0x08, 0x0C,
		0x00, 0x04, 0x08, 0x0C, 0x00, 0x04, 0x08, 0x0C,
	}
	encLutCtr = [16]uint8{
		0x00, 0x48, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	}
)

// encoderBuf is what update-counters hands to capture-position
// (encoder.c's "atomic" struct). Each channel has two; update-counters
// writes the one bp points at, and capture-position turns bp to the
// other before it reads this one. Every field is atomic so that the two
// threads may run at once, on two CPUs; see encoder.busy for the
// update-counters that loaded bp just before the turn.
type encoderBuf struct {
	countDetected, indexDetected, latchDetected atomic.Bool
	rawCount                                    atomic.Int32
	timestamp                                   atomic.Uint32
	indexCount, latchCount                      atomic.Int32
}

// encoderChan is one channel (encoder.c's counter_t). u: only
// update-counters touches it; c: only capture-position; both: atomic.
type encoderChan struct {
	state, oldZ uint8 // u
	oldLatch    bool  // u
	dt          int32 // u: time since the last up count (the fake param dt)

	zmask   atomic.Uint32 // both: 3 while index is armed (Zmask)
	limitDt atomic.Int32  // both: the missing-teeth gap limit (fake param limit_dt)
	gaps    atomic.Int32  // both: missing-teeth gaps seen
	buf     [2]encoderBuf
	bp      atomic.Pointer[encoderBuf]

	phaseA, phaseB, phaseZ, indexEna, reset hal.Bit
	latchIn, latchRising, latchFalling      hal.Bit
	x4Mode, counterMode                     hal.Bit
	rawCounts, count, countLatch            hal.S32
	missingTeeth                            hal.S32
	minSpeed, pos, posInterp, posLatch      hal.Float
	vel, velRPM, posScale                   hal.Float

	taken              *encoderBuf // c: the buffer this capture reads
	rawCount           int32       // c
	timestamp          uint32      // c
	indexCount         int32       // c
	latchCount         int32       // c
	oldScale, scale    float64
	countsSinceTimeout int32
}

// encoder is one loadrt encoder: its channels and the master timestamp,
// timebase, which update-counters advances by its period every cycle.
//
// busy is odd while update-counters runs. On one CPU, as LinuxCNC ran
// encoder.c, update-counters (base thread) preempts capture-position
// and finishes first, so a buffer capture-position has turned away from
// is never written again until it is turned back. On two CPUs an
// update-counters that loaded bp just before the turn may write it
// after capture-position read it: that count is then read a capture
// later, after a newer one, and counts step back by one for a servo
// period (with a velocity spike). capture-position therefore turns every
// channel's bp first, then waits, up to busySpinLimit loads, for the
// update-counters in flight (if any) to finish, and only then reads.
type encoder struct {
	chans    []encoderChan
	timebase atomic.Uint32
	busy     atomic.Uint32
}

// busySpinLimit bounds capture-position's wait for update-counters: far
// above one update-counters of 8 channels (about a microsecond), it only
// matters if the base thread stopped inside one; capture then goes on
// as encoder.c does.
const busySpinLimit = 1 << 16

// newEncoder makes encoder.c's pins for each channel, in its order, with
// its initial values.
func newEncoder(c *hal.Component, names []string) *encoder {
	e := &encoder{chans: make([]encoderChan, len(names))}
	for i, p := range names {
		ch := &e.chans[i]
		ch.phaseA = c.Bit(p+".phase-A", hal.In)
		ch.phaseB = c.Bit(p+".phase-B", hal.In)
		ch.phaseZ = c.Bit(p+".phase-Z", hal.In)
		ch.indexEna = c.Bit(p+".index-enable", hal.IO)
		ch.reset = c.Bit(p+".reset", hal.In)
		ch.latchIn = c.Bit(p+".latch-input", hal.In)
		ch.latchRising = c.Bit(p+".latch-rising", hal.In)
		ch.latchFalling = c.Bit(p+".latch-falling", hal.In)
		ch.rawCounts = c.S32(p+".rawcounts", hal.Out)
		ch.count = c.S32(p+".counts", hal.Out)
		ch.countLatch = c.S32(p+".counts-latched", hal.Out)
		ch.minSpeed = c.Float(p+".min-speed-estimate", hal.In)
		ch.pos = c.Float(p+".position", hal.Out)
		ch.posInterp = c.Float(p+".position-interpolated", hal.Out)
		ch.posLatch = c.Float(p+".position-latched", hal.Out)
		ch.vel = c.Float(p+".velocity", hal.Out)
		ch.velRPM = c.Float(p+".velocity-rpm", hal.Out)
		ch.posScale = c.Float(p+".position-scale", hal.IO)
		ch.x4Mode = c.Bit(p+".x4-mode", hal.IO)
		ch.counterMode = c.Bit(p+".counter-mode", hal.IO)
		ch.missingTeeth = c.S32(p+".missing-teeth", hal.In)
		if c.Err() != nil {
			break
		}
		ch.x4Mode.Set(true)
		ch.latchRising.Set(true)
		ch.latchFalling.Set(true)
		ch.bp.Store(&ch.buf[0])
		ch.minSpeed.Set(1.0)
		ch.posScale.Set(1.0)
		ch.oldScale, ch.scale = 1.0, 1.0
	}
	return e
}

// update is encoder.update-counters (encoder.c's update): it decodes each
// channel's phase-A and phase-B, counts rawcounts, arms and catches the
// index and the latch, and leaves what it saw in the channel's buffer
// for capture-position. Meant for the base thread; it uses no floating
// point.
// RT-safe.
func (e *encoder) update(period time.Duration, _ int64) {
	e.busy.Add(1)
	timebase := e.timebase.Load()
	for i := range e.chans {
		ch := &e.chans[i]
		buf := ch.bp.Load()
		a, b, z := ch.phaseA.Get(), ch.phaseB.Get(), ch.phaseZ.Get()
		counterMode, x4Mode := ch.counterMode.Get(), ch.x4Mode.Get()
		missingTeeth := ch.missingTeeth.Get()
		ch.dt = int32(int64(ch.dt) + int64(period))
		state := ch.state
		if a {
			state |= smPhaseAMask
		}
		if b {
			state |= smPhaseBMask
		}
		switch {
		case counterMode:
			state = encLutCtr[state&(smLookupMask&^smPhaseBMask)]
		case x4Mode:
			state = encLutX4[state&smLookupMask]
		default:
			state = encLutX1[state&smLookupMask]
		}
		raw := ch.rawCounts.Get()
		if state&smCntUpMask != 0 {
			if missingTeeth != 0 && ch.dt > ch.limitDt.Load() {
				ch.gaps.Add(1)
			}
			raw++
			ch.rawCounts.Set(raw)
			buf.rawCount.Store(raw)
			buf.timestamp.Store(timebase)
			buf.countDetected.Store(true)
			ch.dt = 0
		} else if state&smCntDnMask != 0 {
			raw--
			ch.rawCounts.Set(raw)
			buf.rawCount.Store(raw)
			buf.timestamp.Store(timebase)
			buf.countDetected.Store(true)
		}
		ch.state = state
		state = ch.oldZ << 1
		if z || ch.gaps.Load() != 0 {
			state |= 1
		}
		ch.oldZ = state & 3
		if uint32(state)&ch.zmask.Load() == 1 {
			buf.indexCount.Store(raw)
			buf.indexDetected.Store(true)
			ch.zmask.Store(0)
		}
		latch, oldLatch := ch.latchIn.Get(), ch.oldLatch
		rising := latch && !oldLatch
		falling := !latch && oldLatch
		if (rising && ch.latchRising.Get()) || (falling && ch.latchFalling.Get()) {
			buf.latchDetected.Store(true)
			buf.latchCount.Store(raw)
		}
		ch.oldLatch = latch
	}
	e.timebase.Store(timebase + uint32(period))
	e.busy.Add(1)
}

// capture is encoder.capture-position (encoder.c's capture): it takes
// each channel's buffer from update-counters, clears index-enable after
// an index, applies reset and position-scale, estimates the velocity and
// writes counts, position, position-interpolated, the latched values,
// velocity and velocity-rpm. Meant for the servo thread. If an
// update-counters is running on another CPU, it first waits for it to
// end (a bounded spin, see encoder.busy).
// RT-safe.
func (e *encoder) capture(time.Duration, int64) {
	for i := range e.chans {
		ch := &e.chans[i]
		ch.taken = ch.bp.Load()
		if ch.taken == &ch.buf[0] {
			ch.bp.Store(&ch.buf[1])
		} else {
			ch.bp.Store(&ch.buf[0])
		}
	}
	if b := e.busy.Load(); b&1 != 0 {
		for n := 0; n < busySpinLimit && e.busy.Load() == b; n++ {
		}
	}
	for i := range e.chans {
		ch := &e.chans[i]
		buf := ch.taken
		if buf.indexDetected.Load() {
			buf.indexDetected.Store(false)
			ch.indexCount = buf.indexCount.Load()
			ch.indexEna.Set(false)
		}
		if buf.latchDetected.Load() {
			buf.latchDetected.Store(false)
			ch.latchCount = buf.latchCount.Load()
		}
		if ch.indexEna.Get() {
			ch.zmask.Store(3)
		} else {
			ch.zmask.Store(0)
		}
		if posScale := ch.posScale.Get(); posScale != ch.oldScale {
			ch.oldScale = posScale
			if posScale < 1e-20 && posScale > -1e-20 {
				posScale = 1.0
				ch.posScale.Set(posScale)
			}
			ch.scale = 1.0 / posScale
		}
		if ch.minSpeed.Get() == 0 {
			ch.minSpeed.Set(1)
		}
		if ch.reset.Get() {
			ch.rawCount = ch.rawCounts.Get()
			ch.indexCount = ch.rawCount
		}
		timebase := e.timebase.Load()
		if buf.countDetected.Load() {
			missingTeeth := ch.missingTeeth.Get()
			buf.countDetected.Store(false)
			bufTimestamp, bufRawCount := buf.timestamp.Load(), buf.rawCount.Load()
			deltaTime := bufTimestamp - ch.timestamp
			deltaCounts := bufRawCount - ch.rawCount
			if deltaCounts != 0 {
				limitDt := ch.limitDt.Load()
				limitDt = cvttsd2si32(float64(limitDt) * 0.9)
				// C divides the u32 time by the s32 count as unsigned.
				tooth := float64(deltaTime / uint32(deltaCounts))
				limitDt = cvttsd2si32(float64(limitDt) + float64(0.1*float64((float64(missingTeeth)+0.5)*tooth)))
				ch.limitDt.Store(limitDt)
			}
			gaps := ch.gaps.Load()
			// encoder.c writes rawcounts back even when it adds 0: on two
			// CPUs that write can undo an update-counters count made
			// between its read and its write. Adding 0 is skipped.
			if add := missingTeeth * gaps; add != 0 {
				ch.rawCounts.Set(ch.rawCounts.Get() + add)
			}
			ch.rawCount = bufRawCount + missingTeeth*gaps
			deltaCounts += missingTeeth * gaps
			ch.gaps.Store(0)
			ch.timestamp = bufTimestamp
			if ch.countsSinceTimeout < 2 {
				ch.countsSinceTimeout++
			} else {
				ch.vel.Set(float64(float64(deltaCounts)*ch.scale) / float64(float64(deltaTime)*1e-9))
			}
		} else if ch.countsSinceTimeout != 0 {
			deltaTime := timebase - ch.timestamp
			switch {
			case ch.missingTeeth.Get() != 0 && float64(deltaTime) > float64(1.5*float64(ch.limitDt.Load())):
				// no update in the tooth gap
			case float64(deltaTime) < 1e9/float64(ch.minSpeed.Get()*ch.scale):
				vel := ch.scale / float64(float64(deltaTime)*1e-9)
				if vel < 0.0 {
					vel = -vel
				}
				if vel < ch.vel.Get() {
					ch.vel.Set(vel)
				}
				if -vel > ch.vel.Get() {
					ch.vel.Set(-vel)
				}
			default:
				ch.countsSinceTimeout = 0
				ch.vel.Set(0)
			}
		} else {
			ch.vel.Set(0)
		}
		ch.velRPM.Set(float64(ch.vel.Get() * 60.0))
		ch.count.Set(ch.rawCount - ch.indexCount)
		ch.countLatch.Set(ch.latchCount - ch.indexCount)
		ch.pos.Set(float64(float64(ch.count.Get()) * ch.scale))
		ch.posLatch.Set(float64(float64(ch.countLatch.Get()) * ch.scale))
		deltaTime := timebase - ch.timestamp
		interp := float64(ch.vel.Get() * float64(float64(deltaTime)*1e-9))
		ch.posInterp.Set(ch.pos.Get() + interp)
	}
}
