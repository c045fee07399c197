package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/remedy"
)

const unitFile = "gortapi-halhost.service"

// unit parses a unit file into section.key -> values (a key may repeat).
func unit(t *testing.T, text string) map[string][]string {
	t.Helper()
	m := map[string][]string{}
	section := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[':
			section = strings.Trim(line, "[]")
		default:
			k, v, ok := strings.Cut(line, "=")
			require.True(t, ok, "unit line %q", line)
			m[section+"."+k] = append(m[section+"."+k], v)
		}
	}
	return m
}

func readUnit(t *testing.T) string {
	b, err := os.ReadFile(unitFile)
	require.NoError(t, err)
	return string(b)
}

// hostGroup is the unit's group of trusted writers: those who may open the
// host's shared memory and set its pins.
const hostGroup = "gortapi-halhost"

// The unit gives the host what docs/DEPLOY.md says: both limits, the
// non-real-time threads on CPUs the real-time tasks do not use, strict
// mode, and a group of its own for its shared memory.
func TestUnitSettings(t *testing.T) {
	t.Parallel()
	u := unit(t, readUnit(t))
	one := func(key string) string {
		require.Len(t, u[key], 1, key)
		return u[key][0]
	}
	assert.Equal(t, "99", one("Service.LimitRTPRIO"))
	assert.Equal(t, "infinity", one("Service.LimitMEMLOCK"))

	exec := strings.Fields(one("Service.ExecStart"))
	assert.Contains(t, exec, "-rtapi.strict=on")
	var rtCPUs []string
	for _, a := range exec {
		if v, ok := strings.CutPrefix(a, "-rtapi.cpu="); ok {
			rtCPUs = strings.Split(v, ",")
		}
	}
	require.NotEmpty(t, rtCPUs, "ExecStart pins the real-time tasks with -rtapi.cpu")
	affinity := strings.Fields(one("Service.CPUAffinity"))
	require.NotEmpty(t, affinity)
	for _, c := range rtCPUs {
		assert.False(t, slices.Contains(affinity, c), "CPU %s is both a real-time CPU and in CPUAffinity", c)
	}
}

// The group that may use real-time limits (limits.d's @realtime) is not
// the group that may write the host's shared memory: a user given only
// rtprio must not set the production host's pins (issue #37 item 3).
func TestUnitSeparatesGroups(t *testing.T) {
	t.Parallel()
	u := unit(t, readUnit(t))
	require.Len(t, u["Service.Group"], 1)
	assert.Equal(t, hostGroup, u["Service.Group"][0])
	exec := strings.Fields(u["Service.ExecStart"][0])
	assert.Contains(t, exec, "-rtapi.shm-group="+hostGroup)
	assert.NotContains(t, exec, "-rtapi.shm-group="+remedy.Group)
	assert.NotEqual(t, remedy.Group, hostGroup)
	// realtime only for the udev rule's /dev/cpu_dma_latency.
	assert.Equal(t, []string{remedy.Group}, u["Service.SupplementaryGroups"])
}

// The limits are enough, so the unit grants no capability: an ambient
// CAP_SYS_NICE would let the service account reschedule any process,
// root's included (issue #37 item 10). The sandbox keeps what the host
// needs: real-time scheduling, /dev/shm, /run/gortapi, cpu_dma_latency.
func TestUnitGrantsNoCapability(t *testing.T) {
	t.Parallel()
	u := unit(t, readUnit(t))
	assert.Equal(t, []string{""}, u["Service.AmbientCapabilities"], "AmbientCapabilities= empty")
	assert.Equal(t, []string{""}, u["Service.CapabilityBoundingSet"], "CapabilityBoundingSet= empty")
	for key, want := range map[string]string{
		"NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
		"RuntimeDirectory": "gortapi", "RuntimeDirectoryMode": "0750", "DevicePolicy": "closed",
		"DeviceAllow": "/dev/cpu_dma_latency rw", "SystemCallFilter": "@system-service",
	} {
		assert.Equal(t, []string{want}, u["Service."+key], key)
	}
	assert.NotContains(t, u, "Service.RestrictRealtime", "RestrictRealtime=yes forbids SCHED_FIFO")
	assert.NotContains(t, u, "Service.PrivateDevices", "PrivateDevices=yes hides /dev/cpu_dma_latency")
	assert.NotContains(t, u["Service.SystemCallFilter"], "~@resources", "@resources holds sched_setattr")
	assert.NotContains(t, u["Service.SystemCallFilter"], "~@privileged", "@privileged holds fchown, which gives a segment its group")
}

// docs/DEPLOY.md shows the unit as shipped, and the container flags and
// limits.d lines it documents are the ones rtcheck's remedies give.
func TestDocsMatchUnit(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "DEPLOY.md"))
	require.NoError(t, err)
	doc := string(b)
	_, rest, ok := strings.Cut(doc, "```ini\n")
	require.True(t, ok, "DEPLOY.md shows the unit in an ini block")
	shown, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	assert.Equal(t, readUnit(t), shown, "DEPLOY.md shows examples/halhost/"+unitFile+" verbatim")

	for _, want := range []string{
		"--cap-add SYS_NICE", "--cap-add IPC_LOCK", "--ulimit rtprio=99", "--ulimit memlock=-1", "--cpu-rt-runtime=",
		remedy.LimitsFile, remedy.LimitsRTPrio, remedy.LimitsMemlock, remedy.UdevFile, remedy.UdevDMALatency,
	} {
		assert.Contains(t, doc, want)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(readme), "docs/DEPLOY.md"), "README points to the deployment docs")
}

// systemd-analyze verify accepts the unit.
func TestSystemdAnalyzeVerify(t *testing.T) {
	if testing.Short() {
		t.Skip("runs systemd-analyze, another program: full lane")
	}
	analyze := lookSystemdAnalyze(t)
	out, err := exec.Command(analyze, "verify", standInUnit(t)).CombinedOutput()
	require.NoError(t, err, "systemd-analyze verify:\n%s", out)
	assert.Empty(t, strings.TrimSpace(string(out)), "systemd-analyze verify warns")
}

func lookSystemdAnalyze(t *testing.T) string {
	t.Helper()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("GORTAPI_REQUIRE_SYSTEMD") != "" {
			t.Fatal("systemd-analyze not found, and GORTAPI_REQUIRE_SYSTEMD is set")
		}
		t.Skip("SKIP: systemd-analyze not found (Debian package systemd): " + unitFile + " is not checked here")
	}
	return analyze
}

// standInUnit writes a copy of the unit whose ExecStart names a stand-in
// executable (systemd-analyze wants the command to exist); nothing else
// changes.
func standInUnit(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	stand := filepath.Join(dir, "halhost")
	require.NoError(t, os.WriteFile(stand, []byte("#!/bin/sh\n"), 0o755))
	text := readUnit(t)
	require.Contains(t, text, "ExecStart=/usr/local/bin/halhost ")
	text = strings.Replace(text, "ExecStart=/usr/local/bin/halhost ", "ExecStart="+stand+" ", 1)
	name := filepath.Join(dir, unitFile)
	require.NoError(t, os.WriteFile(name, []byte(text), 0o644))
	return name
}

// systemd-analyze security rates the unit's exposure at most 2.0 of 10
// (docs/DEPLOY.md records the figure: 1.7, from 6.7 before the sandbox).
func TestSystemdAnalyzeSecurity(t *testing.T) {
	if testing.Short() {
		t.Skip("runs systemd-analyze, another program: full lane")
	}
	analyze := lookSystemdAnalyze(t)
	name := standInUnit(t)
	out, err := exec.Command(analyze, "security", "--offline=true", "--threshold=20", "--no-pager", name).CombinedOutput()
	if err != nil && strings.Contains(string(out), "--offline") {
		t.Skip("SKIP: this systemd-analyze has no --offline (systemd < 250)")
	}
	require.NoError(t, err, "systemd-analyze security: exposure over 2.0:\n%s", out)
}
