package main

import (
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

// halcmd takes the group as every rtapi program does: -rtapi.shm-group
// (or its older name -group), else $RTAPI_SHM_GROUP; a bad one is
// refused before any dial. Before, it ignored $RTAPI_SHM_GROUP.
func TestGroupAsEveryProgramTakesIt(t *testing.T) {
	_, bin := binaries(t)
	for _, tc := range []struct {
		env  string
		args []string
		want string
	}{
		{"-5", nil, `group "-5" is negative`},
		{"-5", []string{"-group", "-6"}, `group "-6" is negative`},
		{"-5", []string{"-rtapi.shm-group", "-7", "-group", "-6"}, `group "-7" is negative`},
	} {
		cmd := exec.Command(bin, append(append([]string{"-shm-dir", t.TempDir(), "-rtapi.instance", "7"}, tc.args...), "show")...)
		cmd.Env = append(os.Environ(), "RTAPI_SHM_GROUP="+tc.env)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		out, err := cmd.CombinedOutput()
		assert.Error(t, err, "%v", tc.args)
		assert.Contains(t, string(out), tc.want, "%v", tc.args)
	}
}
