package comps

import (
	"fmt"
	"math"
	"time"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// maxChan bounds num_chan= and names= of pid and siggen (their MAX_CHAN).
const maxChan = 16

// loadPID is pid's factory: num_chan=N (or count=N) or names=a,b, at
// most 16, default 3; debug= is taken and changes nothing, as the debug
// pins are always made.
func loadPID(h *hal.HAL, a *hal.LoadArgs) error {
	if _, err := a.Int("debug", 0); err != nil {
		return err
	}
	names, err := channels(a, 3)
	if err != nil {
		return err
	}
	c, err := h.NewComponent(a.Name)
	if err != nil {
		return err
	}
	for _, n := range names {
		newPID(c, n)
	}
	return c.Ready()
}

// channels returns the instances of a component of LinuxCNC's .c kind
// (pid, siggen): num_chan=N or names=a,b, at most maxChan.
func channels(a *hal.LoadArgs, def int) ([]string, error) {
	names, err := a.Instances(def)
	if err != nil {
		return nil, err
	}
	if len(names) > maxChan {
		return nil, fmt.Errorf("loadrt %s: invalid number of channels: %d (at most %d): %w",
			a.Name, len(names), maxChan, rtapi.ErrInvalid)
	}
	return names, nil
}

// Auto-tuner states and tune-type values (pid.c's State and Mode).
const (
	tunePID uint8 = iota
	tuneIdle
	tuneStart
	tunePos
	tuneNeg
	tuneAbort
)

const (
	tuneTypePID   = 0 // Ziegler-Nichols PID
	tuneTypePIFF1 = 1 // Ziegler-Nichols PI with FF1 = 1
)

// tunePi is pid.c's PI, not math.Pi.
const tunePi = 3.141592653589

// pid is one loop of pid(9), a port of LinuxCNC's pid.c: every
// expression in its order, with float64() around products so that no
// architecture fuses them into one FMA instruction (x86-64's LinuxCNC
// build rounds each). The internal terms live in fields and are
// published on their Out pins (LinuxCNC's debug=1 pins).
type pid struct {
	enable, indexEnable, prevTarget     hal.Bit
	command, feedback                   hal.Float
	commandDeriv, feedbackDeriv         hal.Float
	errorPin, output                    hal.Float
	saturated                           hal.Bit
	saturatedS                          hal.Float
	saturatedCount                      hal.S32
	pgain, igain, dgain                 hal.Float
	ff0, ff1, ff2, ff3                  hal.Float
	deadband, maxerror, maxerrorI       hal.Float
	maxerrorD, maxcmdD, maxcmdDD        hal.Float
	maxcmdDDD, bias, maxoutput          hal.Float
	tuneEffort                          hal.Float
	tuneCycles, tuneType                hal.U32
	tuneMode, tuneStartPin              hal.Bit
	errorIPin, errorDPin                hal.Float
	cmdDPin, cmdDDPin, cmdDDDPin        hal.Float
	ultimateGainPin, ultimatePeriodPin  hal.Float
	errorI, errorD, cmdD, cmdDD, cmdDDD float64
	prevError, prevCmd, prevFb          float64
	limitState                          float64
	satS                                float64
	satCount                            int32
	prevIE                              bool

	state                                   uint8
	cycleCount, cyclePeriod                 uint32
	cycleAmplitude, totalTime, avgAmplitude float64
	ultimateGain, ultimatePeriod            float64
}

// newPID makes pid instance p with pid.c's pins, in its order, and its
// function p.do-pid-calcs.
func newPID(c *hal.Component, p string) *pid {
	in := func(n string, def float64) hal.Float {
		f := c.Float(p+"."+n, hal.In)
		f.Set(def)
		return f
	}
	out := func(n string) hal.Float { return c.Float(p+"."+n, hal.Out) }
	l := &pid{}
	l.enable = c.Bit(p+".enable", hal.In)
	l.command = in("command", 0)
	l.commandDeriv = in("command-deriv", 0)
	l.feedback = in("feedback", 0)
	l.feedbackDeriv = in("feedback-deriv", 0)
	l.errorPin, l.output = out("error"), out("output")
	l.saturated = c.Bit(p+".saturated", hal.Out)
	l.saturatedS = out("saturated-s")
	l.saturatedCount = c.S32(p+".saturated-count", hal.Out)
	l.pgain, l.igain, l.dgain = in("Pgain", 1), in("Igain", 0), in("Dgain", 0)
	l.ff0, l.ff1, l.ff2, l.ff3 = in("FF0", 0), in("FF1", 0), in("FF2", 0), in("FF3", 0)
	l.deadband, l.maxerror, l.maxerrorI = in("deadband", 0), in("maxerror", 0), in("maxerrorI", 0)
	l.maxerrorD, l.maxcmdD, l.maxcmdDD = in("maxerrorD", 0), in("maxcmdD", 0), in("maxcmdDD", 0)
	l.maxcmdDDD, l.bias, l.maxoutput = in("maxcmdDDD", 0), in("bias", 0), in("maxoutput", 0)
	l.indexEnable = c.Bit(p+".index-enable", hal.In)
	l.prevTarget = c.Bit(p+".error-previous-target", hal.In)
	l.prevTarget.Set(true)
	l.tuneEffort = c.Float(p+".tune-effort", hal.IO)
	l.tuneEffort.Set(0.5)
	l.tuneCycles = c.U32(p+".tune-cycles", hal.IO)
	l.tuneCycles.Set(50)
	l.tuneType = c.U32(p+".tune-type", hal.IO)
	l.tuneMode = c.Bit(p+".tune-mode", hal.In)
	l.tuneStartPin = c.Bit(p+".tune-start", hal.IO)
	l.errorIPin, l.errorDPin = out("errorI"), out("errorD")
	l.cmdDPin, l.cmdDDPin, l.cmdDDDPin = out("commandD"), out("commandDD"), out("commandDDD")
	l.ultimateGainPin, l.ultimatePeriodPin = out("ultimate-gain"), out("ultimate-period")
	c.Export(p+".do-pid-calcs", l.calc)
	return l
}

// limitTo is pid.c's limit: v within ±l, no limit when l is 0.
func limitTo(v, l float64) float64 {
	if l != 0.0 {
		if v > l {
			return l
		} else if v < -l {
			return -l
		}
	}
	return v
}

// calc is pid.c's calc_pid.
// RT-safe.
func (l *pid) calc(period time.Duration, _ int64) {
	if l.state != tunePID {
		l.autoTune(period)
		return
	}
	periodfp := float64(period) * 0.000000001
	periodrecip := 1.0 / periodfp
	enable := l.enable.Get()
	command := l.command.Get()
	feedback := l.feedback.Get()
	noIndexReset := !(l.prevIE && !l.indexEnable.Get())
	var tmp1 float64
	if noIndexReset && l.prevTarget.Get() {
		tmp1 = l.prevCmd - feedback
	} else {
		tmp1 = command - feedback
	}
	l.errorPin.Set(tmp1)
	if l.tuneMode.Get() {
		l.errorI, l.prevError, l.errorD, l.prevCmd = 0, 0, 0, 0
		l.limitState, l.cmdD, l.cmdDD = 0, 0, 0
		l.errorIPin.Set(0)
		l.errorDPin.Set(0)
		l.cmdDPin.Set(0)
		l.cmdDDPin.Set(0)
		l.output.Set(0)
		l.state = tuneIdle
		return
	}
	tmp1 = limitTo(tmp1, l.maxerror.Get())
	deadband := l.deadband.Get()
	if tmp1 > deadband {
		tmp1 -= deadband
	} else if tmp1 < -deadband {
		tmp1 += deadband
	} else {
		tmp1 = 0
	}
	if enable {
		if tmp1*l.limitState <= 0.0 {
			l.errorI = l.errorI + float64(tmp1*periodfp)
		}
		l.errorI = limitTo(l.errorI, l.maxerrorI.Get())
	} else {
		l.errorI = 0
	}
	l.errorIPin.Set(l.errorI)
	if noIndexReset {
		l.commandDeriv.SetOwn((command - l.prevCmd) * periodrecip)  // pid.c's commandvds
		l.feedbackDeriv.SetOwn((feedback - l.prevFb) * periodrecip) // pid.c's feedbackvds
	}
	commandv := l.commandDeriv.Get()
	l.errorD = commandv - l.feedbackDeriv.Get()
	l.prevError = tmp1
	l.errorD = limitTo(l.errorD, l.maxerrorD.Get())
	l.errorDPin.Set(l.errorD)
	tmp2 := l.cmdD
	l.cmdD = commandv
	l.prevIE = l.indexEnable.Get()
	l.prevCmd = command
	l.prevFb = feedback
	l.cmdD = limitTo(l.cmdD, l.maxcmdD.Get())
	l.cmdDPin.Set(l.cmdD)
	tmp3 := l.cmdDD
	l.cmdDD = limitTo((l.cmdD-tmp2)*periodrecip, l.maxcmdDD.Get())
	l.cmdDDPin.Set(l.cmdDD)
	l.cmdDDD = limitTo((l.cmdDD-tmp3)*periodrecip, l.maxcmdDDD.Get())
	l.cmdDDDPin.Set(l.cmdDDD)
	if enable {
		tmp1 = l.bias.Get() + float64(l.pgain.Get()*tmp1) + float64(l.igain.Get()*l.errorI) +
			float64(l.dgain.Get()*l.errorD)
		tmp1 += float64(command*l.ff0.Get()) + float64(l.cmdD*l.ff1.Get()) +
			float64(l.cmdDD*l.ff2.Get()) + float64(l.cmdDDD*l.ff3.Get())
		// As pid.c, with maxoutput 0 the limit state is left as it was.
		if maxoutput := l.maxoutput.Get(); maxoutput != 0.0 {
			if tmp1 > maxoutput {
				tmp1, l.limitState = maxoutput, 1.0
			} else if tmp1 < -maxoutput {
				tmp1, l.limitState = -maxoutput, -1.0
			} else {
				l.limitState = 0.0
			}
		}
	} else {
		tmp1, l.limitState = 0.0, 0.0
	}
	l.output.Set(tmp1)
	if l.limitState != 0 {
		l.saturated.Set(true)
		l.satS = l.satS + float64(float64(period)*1e-9)
		if l.satCount != math.MaxInt32 {
			l.satCount++
		}
	} else {
		l.saturated.Set(false)
		l.satS, l.satCount = 0, 0
	}
	l.saturatedS.Set(l.satS)
	l.saturatedCount.Set(l.satCount)
}

// autoTune is pid.c's Pid_AutoTune: a relay drives the output to
// bias ± |tune-effort| by the error's sign for tune-cycles half cycles,
// then sets the gains from the ultimate gain and period (Åström-Hägglund,
// Ziegler-Nichols).
// RT-safe.
func (l *pid) autoTune(period time.Duration) {
	e := l.command.Get() - l.feedback.Get()
	l.errorPin.Set(e)
	if !l.enable.Get() || !l.tuneMode.Get() {
		l.state = tuneAbort
	}
	switch l.state {
	case tuneIdle:
		if l.tuneStartPin.Get() {
			l.state = tuneStart
		}
		return
	case tuneStart:
		l.state = tunePos
		l.cycleCount, l.cyclePeriod = 0, 0
		l.cycleAmplitude, l.totalTime, l.avgAmplitude = 0, 0, 0
		l.ultimateGain, l.ultimatePeriod = 0, 0
		l.ultimateGainPin.Set(0)
		l.ultimatePeriodPin.Set(0)
		l.output.Set(l.bias.Get() + math.Abs(l.tuneEffort.Get()))
		return
	case tunePos, tuneNeg:
		l.cyclePeriod += uint32(period)
		if e < 0.0 {
			if -e > l.cycleAmplitude {
				l.cycleAmplitude = -e
			}
			if l.state == tunePos {
				l.state = tuneNeg
				l.cycleEnd()
			}
			l.output.Set(l.bias.Get() - math.Abs(l.tuneEffort.Get()))
		} else {
			if e > l.cycleAmplitude {
				l.cycleAmplitude = e
			}
			if l.state == tuneNeg {
				l.state = tunePos
				l.cycleEnd()
			}
			l.output.Set(l.bias.Get() + math.Abs(l.tuneEffort.Get()))
		}
		cycles := l.tuneCycles.Get()
		if l.cycleCount < cycles {
			return
		}
		l.ultimateGain = (4.0 * math.Abs(l.tuneEffort.Get())) / float64(tunePi*l.avgAmplitude)
		l.ultimatePeriod = 2.0 * l.totalTime / float64(cycles)
		l.ultimateGainPin.Set(l.ultimateGain)
		l.ultimatePeriodPin.Set(l.ultimatePeriod)
		ku, pu := l.ultimateGain, l.ultimatePeriod
		l.ff0.Set(0)
		l.ff2.Set(0)
		if l.tuneType.Get() == tuneTypePID {
			l.pgain.Set(0.6 * ku)
			l.igain.Set(1.2 * ku / pu)
			l.dgain.Set((3.0 / 40.0) * ku * pu)
			l.ff1.Set(0)
		} else {
			l.pgain.Set(0.45 * ku)
			l.igain.Set(0.54 * ku / pu)
			l.dgain.Set(0)
			l.ff1.Set(1)
		}
	}
	// tuneAbort, and the end of a tuning (pid.c falls through).
	l.output.Set(l.bias.Get())
	l.tuneStartPin.Set(false)
	if l.tuneMode.Get() {
		l.state = tuneIdle
	} else {
		l.state = tunePID
	}
}

// cycleEnd is pid.c's Pid_CycleEnd: one half cycle of the relay ended.
func (l *pid) cycleEnd() {
	l.cycleCount++
	l.avgAmplitude += l.cycleAmplitude / float64(l.tuneCycles.Get())
	l.cycleAmplitude = 0
	l.totalTime += float64(float64(l.cyclePeriod) * 0.000000001)
	l.cyclePeriod = 0
}
