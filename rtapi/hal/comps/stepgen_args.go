package comps

// stepgen's loadrt arguments, parsed as stepgen.c and rtapi_app parse
// them (the component itself is in stepgen.go).

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// loadStepgen is stepgen's factory, stepgen.c's rtapi_app_main: one
// channel per step_type entry up to the first -1 (at most 16; none is an
// error), each in the mode of its ctrl_type entry (p, the default, or
// v, by the first letter, either case), and type 15's pattern from
// user_step_type (at most 18 entries, values 0 to 31).
func loadStepgen(h *hal.HAL, a *hal.LoadArgs) error {
	var vals [3]string
	var given [3]bool
	for i, k := range [3]string{"step_type", "ctrl_type", "user_step_type"} {
		vals[i], given[i] = a.Get(k)
	}
	cfg, err := parseStepgenArgs(vals, given)
	if err != nil {
		return err
	}
	c, err := h.NewComponent("stepgen")
	if err != nil {
		return err
	}
	newStepgen(c, cfg)
	return c.Ready()
}

// stepgenConfig is a parsed loadrt stepgen line.
type stepgenConfig struct {
	stepType []int
	posMode  []bool
	lut      [14][stepgenMaxCycle]uint8
	cycleLen [14]int
	phases   [14]int
}

// parseStepgenArgs checks step_type=, ctrl_type= and user_step_type=
// (vals, and whether each was given) as rtapi_app_main does.
func parseStepgenArgs(vals [3]string, given [3]bool) (*stepgenConfig, error) {
	stepTypes, err := stepgenIntArray("step_type", vals[0], given[0], stepgenMaxChan)
	if err != nil {
		return nil, err
	}
	ctrl, err := stepgenStringArray("ctrl_type", vals[1], given[1], stepgenMaxChan)
	if err != nil {
		return nil, err
	}
	user, err := stepgenIntArray("user_step_type", vals[2], given[2], stepgenMaxCycle)
	if err != nil {
		return nil, err
	}
	cfg := &stepgenConfig{lut: stepgenLUT, cycleLen: stepgenCycleLen, phases: stepgenPhases}
	if err := stepgenUserType(user, &cfg.lut, &cfg.cycleLen, &cfg.phases); err != nil {
		return nil, err
	}
	for n := 0; n < len(stepTypes) && stepTypes[n] != -1; n++ {
		t := stepTypes[n]
		if t > stepgenMaxType || t < 0 {
			return nil, fmt.Errorf("loadrt stepgen: bad stepping type '%d', axis %d (step_type=: want 0 to %d): %w",
				t, n, stepgenMaxType, rtapi.ErrInvalid)
		}
		var ct string
		if n < len(ctrl) {
			ct = ctrl[n]
		}
		pos, ok := stepgenCtrlType(ct)
		if !ok {
			return nil, fmt.Errorf("loadrt stepgen: bad control type '%s' for axis %d (ctrl_type=: must be 'p' or 'v'): %w",
				ct, n, rtapi.ErrInvalid)
		}
		cfg.stepType = append(cfg.stepType, int(t))
		cfg.posMode = append(cfg.posMode, pos)
	}
	if len(cfg.stepType) == 0 {
		return nil, fmt.Errorf("loadrt stepgen: no channels configured (give step_type=): %w", rtapi.ErrInvalid)
	}
	return cfg, nil
}

// newStepgen makes cfg's channels on c and exports the three functions.
func newStepgen(c *hal.Component, cfg *stepgenConfig) *stepgenComp {
	s := &stepgenComp{ch: make([]stepgenChan, len(cfg.stepType))}
	// periodns is set by make-pulses' first run; until update-freq sees
	// it, these defaults hold (rtapi_app_main).
	s.periodns.Store(50000)
	s.oldPeriodns = 50000
	s.oldDtns = 1000000
	s.periodfp = float64(s.oldPeriodns) * 0.000000001
	s.freqscale = float64(int64(1)<<stepgenPickoff) * s.periodfp
	s.accelscale = float64(s.freqscale * s.periodfp)
	s.dt = float64(s.oldDtns) * 0.000000001
	s.recipDt = 1.0 / s.dt
	for n := range s.ch {
		s.ch[n].export(c, n, cfg.stepType[n], cfg.posMode[n], cfg)
	}
	c.Export("stepgen.make-pulses", s.makePulses)
	c.Export("stepgen.update-freq", s.updateFreq)
	c.Export("stepgen.capture-position", s.capturePosition)
	return s
}

// stepgenUserType is setup_user_step_type: entries up to the first -1
// fill type 15's row; its cycle is their count and its phases the
// highest bit they use. A value outside 0..31 is refused.
func stepgenUserType(user []int32, lut *[14][stepgenMaxCycle]uint8, cycleLen, phases *[14]int) error {
	used := int32(0)
	i := 0
	for ; i < len(user) && user[i] != -1; i++ {
		lut[stepgenUserRow][i] = uint8(user[i])
		used |= user[i]
	}
	cycleLen[stepgenUserRow] = i
	if used&^0x1f != 0 {
		return fmt.Errorf("loadrt stepgen: bad user step type uses more than 5 phases (user_step_type=: want values 0 to 31): %w",
			rtapi.ErrInvalid)
	}
	switch {
	case used&0x10 != 0:
		phases[stepgenUserRow] = 5
	case used&0x8 != 0:
		phases[stepgenUserRow] = 4
	case used&0x4 != 0:
		phases[stepgenUserRow] = 3
	case used&0x2 != 0:
		phases[stepgenUserRow] = 2
	case used&0x1 != 0:
		phases[stepgenUserRow] = 1
	}
	return nil
}

// stepgenCtrlType is parse_ctrl_type: empty or p/P is position mode,
// v/V velocity mode, by the first letter; anything else is not ok.
func stepgenCtrlType(ct string) (pos, ok bool) {
	if ct == "" || ct[0] == 'p' || ct[0] == 'P' {
		return true, true
	}
	if ct[0] == 'v' || ct[0] == 'V' {
		return false, true
	}
	return false, false
}

// stepgenIntArray parses an integer array argument as rtapi_app does:
// comma-separated, each element C's strtol base 0 stored in an int (an
// empty element is 0), at most max elements. Not given: nil.
func stepgenIntArray(key, v string, given bool, max int) ([]int32, error) {
	list, err := stepgenStringArray(key, v, given, max)
	if err != nil {
		return nil, err
	}
	out := make([]int32, len(list))
	for i, e := range list {
		n, ok := strtolBase0(e)
		if !ok {
			return nil, fmt.Errorf("loadrt stepgen: `%s' invalid for parameter `%s' (%s=): %w", e, key, key, rtapi.ErrInvalid)
		}
		out[i] = int32(n) // C's long to int: truncated
	}
	return out, nil
}

// stepgenStringArray splits a string array argument at commas, at most
// max elements, as rtapi_app does. Not given: nil.
func stepgenStringArray(key, v string, given bool, max int) ([]string, error) {
	if !given {
		return nil, nil
	}
	list := strings.Split(v, ",")
	if len(list) > max {
		return nil, fmt.Errorf("loadrt stepgen: %s=%s: can only take %d arguments: %w", key, v, max, rtapi.ErrInvalid)
	}
	return list, nil
}

// strtolBase0 is C's strtol(s, &end, 0) with *end required to be the
// end: leading white space, a sign, then 0x hex, 0 octal or decimal; out
// of range saturates; "" and a lone sign are 0.
func strtolBase0(s string) (int64, bool) {
	if s == "" {
		return 0, true // no digits: end is s, and *end is the NUL
	}
	body := strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if body != "" && (body[0] == '+' || body[0] == '-') {
		neg = body[0] == '-'
		body = body[1:]
	}
	if body == "" {
		return 0, false // no digits: end is s, not its end
	}
	base := 10
	digits := body
	switch {
	case len(body) > 2 && (body[:2] == "0x" || body[:2] == "0X") && isHex(body[2]):
		base, digits = 16, body[2:]
	case body[0] == '0':
		base = 8
	}
	for i := 0; i < len(digits); i++ {
		if !isDigit(digits[i], base) {
			return 0, false
		}
	}
	u, err := strconv.ParseUint(digits, base, 64)
	switch {
	case err != nil || !neg && u > math.MaxInt64:
		if neg {
			return math.MinInt64, true
		}
		return math.MaxInt64, true
	case neg && u > 1<<63:
		return math.MinInt64, true
	case neg:
		return int64(-u), true
	}
	return int64(u), true
}

func isHex(b byte) bool { return isDigit(b, 16) }

func isDigit(b byte, base int) bool {
	switch {
	case b >= '0' && b <= '9':
		return int(b-'0') < base
	case b >= 'a' && b <= 'f':
		return base == 16
	case b >= 'A' && b <= 'F':
		return base == 16
	}
	return false
}
