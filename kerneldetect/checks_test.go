package kerneldetect

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

// In a container (podman with runc on cgroup v1, as run for docs/DEPLOY.md)
// /proc/self/cgroup names the host's path of the container's cgroup, and
// the container's own cgroup is mounted at the root of
// /sys/fs/cgroup/cpu. The check found no file under the host's path and
// said ok; a container cgroup with no RT budget must fail it.
func TestRTGroupSchedInAContainerReadsTheMountRoot(t *testing.T) {
	const self = "/libpod_parent/libpod-35dd23674e48"
	for _, c := range []struct {
		budget string
		want   Status
	}{{"0\n", StatusFail}, {"950000\n", StatusOK}} {
		fsys := fstest.MapFS{
			"proc/self/cgroup":                    {Data: []byte("11:pids:" + self + "\n4:cpu:" + self + "\n3:cpuset:" + self + "\n0::/\n")},
			"sys/fs/cgroup/cpu/cpu.rt_runtime_us": {Data: []byte(c.budget)},
		}
		got := groupSchedCheck(t, fsys)
		require.Equal(t, c.want, got.Status, got.Evidence)
		require.Contains(t, got.Evidence, "sys/fs/cgroup/cpu/cpu.rt_runtime_us="+c.budget[:len(c.budget)-1]+" (the mount's root")
	}

	// On a host the cgroup's own path is read, not the root's.
	fsys := fstest.MapFS{
		"proc/self/cgroup":                             {Data: []byte("4:cpu:/docker/x\n")},
		"sys/fs/cgroup/cpu/cpu.rt_runtime_us":          {Data: []byte("950000\n")},
		"sys/fs/cgroup/cpu/docker/x/cpu.rt_runtime_us": {Data: []byte("0\n")},
	}
	require.Equal(t, StatusFail, groupSchedCheck(t, fsys).Status)

	// In the root cgroup, the root's budget is the process's.
	for budget, want := range map[string]Status{"0\n": StatusFail, "950000\n": StatusOK} {
		fsys = fstest.MapFS{
			"proc/self/cgroup":                    {Data: []byte("4:cpu:/\n")},
			"sys/fs/cgroup/cpu/cpu.rt_runtime_us": {Data: []byte(budget)},
		}
		got := groupSchedCheck(t, fsys)
		require.Equal(t, want, got.Status, got.Evidence)
		require.NotContains(t, got.Evidence, "mount's root")
	}
}

func groupSchedCheck(t *testing.T, fsys fstest.MapFS) Check {
	t.Helper()
	r, err := DetectFS(fsys)
	require.NoError(t, err)
	for _, c := range r.Checks {
		if c.ID == CheckRTGroupSched {
			return c
		}
	}
	t.Fatal("no rt_group_sched check")
	return Check{}
}
