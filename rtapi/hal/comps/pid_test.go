package comps_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue #36, item 2: pid.c differentiates the raw command and feedback,
// not the error after maxerror and deadband. A step of 5 with maxerror 1
// gives errorD 5000 and a D term of 5000 * Dgain; before, gortapi took
// the limited error and gave 1000.
func TestPIDDerivativeOfRawError(t *testing.T) {
	r := load(t, servo+`loadrt pid count=1
addf pid.0.do-pid-calcs servo
setp pid.0.Pgain 0
setp pid.0.Dgain 0.01
setp pid.0.maxerror 1
setp pid.0.deadband 0.1
setp pid.0.enable 1
`)
	r.cycles("servo", 1)
	r.setp("pid.0.command", "5")
	r.cycles("servo", 1)
	periodfp := float64(r.period()) * 0.000000001
	want := 5 * (1.0 / periodfp)
	assert.Equal(t, want, r.get("pid.0.errorD"))
	assert.Equal(t, 0.01*want, r.get("pid.0.output"))
}

// Issue #36, item 3: command-deriv and feedback-deriv are pins. A servo
// config that nets the encoder's velocity to feedback-deriv loads, and
// pid takes the derivative from it; unlinked, pid differences the
// feedback itself, and a setp on the pin is overwritten, as in pid.c.
// Before, the net failed: the pins did not exist.
func TestPIDDerivativePins(t *testing.T) {
	r := load(t, servo+`loadrt pid count=1
loadrt sim_motor
addf sim_motor.0.update servo
addf pid.0.do-pid-calcs servo
setp pid.0.Pgain 0
setp pid.0.Dgain 1
setp sim_motor.0.time-constant 0
setp sim_motor.0.command 250
setp sim_motor.0.enable 1
setp pid.0.enable 1
net enc-vel sim_motor.0.velocity => pid.0.feedback-deriv
`)
	r.cycles("servo", 2)
	assert.Equal(t, 250.0, r.get("pid.0.feedback-deriv"))
	assert.Equal(t, -250.0, r.get("pid.0.errorD"), "errorD = command-deriv - the encoder's velocity")

	require.NoError(t, r.h.Unlink("pid.0.feedback-deriv"))
	r.setp("pid.0.feedback", "0.5")
	r.setp("pid.0.feedback-deriv", "99")
	r.cycles("servo", 1)
	periodfp := float64(r.period()) * 0.000000001
	assert.Equal(t, 0.5*(1.0/periodfp), r.get("pid.0.feedback-deriv"), "unlinked: pid's own difference")
	assert.Equal(t, -0.5*(1.0/periodfp), r.get("pid.0.errorD"))
}

// error-previous-target is TRUE by default, as in pid.c: the error is
// the previous cycle's command less the feedback, as motion sees it.
func TestPIDErrorPreviousTarget(t *testing.T) {
	r := load(t, servo+"loadrt pid\naddf pid.0.do-pid-calcs servo\nsetp pid.0.enable 1\n")
	r.setp("pid.0.command", "2")
	r.cycles("servo", 1)
	assert.Zero(t, r.get("pid.0.error"), "the previous command was 0")
	r.setp("pid.0.feedback", "0.5")
	r.cycles("servo", 1)
	assert.Equal(t, 1.5, r.get("pid.0.error"))
	r.setp("pid.0.error-previous-target", false)
	r.setp("pid.0.command", "3")
	r.cycles("servo", 1)
	assert.Equal(t, 2.5, r.get("pid.0.error"))
}
