package deploy

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

// The unit gives the host what docs/DEPLOY.md says: both capabilities,
// both limits, the non-real-time threads on CPUs the real-time tasks do
// not use, strict mode, and the one group name.
func TestUnitSettings(t *testing.T) {
	t.Parallel()
	u := unit(t, readUnit(t))
	one := func(key string) string {
		require.Len(t, u[key], 1, key)
		return u[key][0]
	}
	assert.ElementsMatch(t, []string{"CAP_SYS_NICE", "CAP_IPC_LOCK"}, strings.Fields(one("Service.AmbientCapabilities")))
	assert.ElementsMatch(t, []string{"CAP_SYS_NICE", "CAP_IPC_LOCK"}, strings.Fields(one("Service.CapabilityBoundingSet")))
	assert.Equal(t, "99", one("Service.LimitRTPRIO"))
	assert.Equal(t, "infinity", one("Service.LimitMEMLOCK"))
	assert.Equal(t, remedy.Group, one("Service.Group"))

	exec := strings.Fields(one("Service.ExecStart"))
	assert.Contains(t, exec, "-rtapi.strict=on")
	assert.Contains(t, exec, "-rtapi.shm-group="+remedy.Group)
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
	assert.Equal(t, readUnit(t), shown, "DEPLOY.md shows examples/deploy/"+unitFile+" verbatim")

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

// systemd-analyze verify accepts the unit. The command in ExecStart must
// exist for it, so a copy names a stand-in executable; nothing else
// changes.
func TestSystemdAnalyzeVerify(t *testing.T) {
	if testing.Short() {
		t.Skip("runs systemd-analyze, another program: full lane")
	}
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("GORTAPI_REQUIRE_SYSTEMD") != "" {
			t.Fatal("systemd-analyze not found, and GORTAPI_REQUIRE_SYSTEMD is set")
		}
		t.Skip("SKIP: systemd-analyze not found (Debian package systemd): " + unitFile + " is not verified here")
	}
	dir := t.TempDir()
	stand := filepath.Join(dir, "halhost")
	require.NoError(t, os.WriteFile(stand, []byte("#!/bin/sh\n"), 0o755))
	text := readUnit(t)
	require.Contains(t, text, "ExecStart=/usr/local/bin/halhost ")
	text = strings.Replace(text, "ExecStart=/usr/local/bin/halhost ", "ExecStart="+stand+" ", 1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, unitFile), []byte(text), 0o644))
	out, err := exec.Command(analyze, "verify", filepath.Join(dir, unitFile)).CombinedOutput()
	require.NoError(t, err, "systemd-analyze verify:\n%s", out)
	assert.Empty(t, strings.TrimSpace(string(out)), "systemd-analyze verify warns")
}
