package main

import (
	"io"
	"net"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

// TestMetricsOverLoopback scrapes a running halhost's -metrics-addr on
// 127.0.0.1 and checks the exposition.
func TestMetricsOverLoopback(t *testing.T) {
	host, _ := binaries(t)
	p := start(t, host, append(keys(t), "-rtapi.flavor", "posix", "-metrics-addr", "127.0.0.1:0")...)
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/metrics`).FindString(p.waitFor("Prometheus metrics on"))
	require.NotEmpty(t, url)
	// A client that connects and says nothing holds halhost's one
	// connection slot (promrt.Listen) only until promrt.ReadHeaderTimeout:
	// the scrapes below are served after it. Before, a bare http.Server
	// kept such a connection for ever.
	silent, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/metrics"))
	require.NoError(t, err)
	defer silent.Close()
	const want = `
# HELP gortapi_task_info A task's scheduling: policy, priority, wake mode, and why it runs degraded (empty when it does not).
# TYPE gortapi_task_info gauge
gortapi_task_info{degraded="",policy="SCHED_OTHER",priority="0",task="base",wake="nanosleep"} 1
gortapi_task_info{degraded="",policy="SCHED_OTHER",priority="0",task="servo",wake="nanosleep"} 1
# HELP gortapi_task_late_threshold_seconds Wake-up latency above which a wake-up counts as late.
# TYPE gortapi_task_late_threshold_seconds gauge
gortapi_task_late_threshold_seconds{task="base"} 5e-05
gortapi_task_late_threshold_seconds{task="servo"} 0.0001
`
	require.NoError(t, testutil.ScrapeAndCompare(url, strings.NewReader(want), "gortapi_task_info", "gortapi_task_late_threshold_seconds"))
	// the HAL's own figures are there too
	require.Error(t, testutil.ScrapeAndCompare(url, strings.NewReader(""), "gortapi_hal_thread_beat_total"), "no HAL thread metrics")
	_, err = io.Copy(io.Discard, silent)
	require.NoError(t, err, "the silent connection was closed by halhost (EOF)")
	require.Equal(t, 0, p.interrupt())
}

// TestSchedulingSaysWhatIsTrue: on the posix flavor the HAL threads run
// SCHED_OTHER; halhost must not leave "prio 98" unexplained.
func TestSchedulingSaysWhatIsTrue(t *testing.T) {
	host, _ := binaries(t)
	p := start(t, host, append(keys(t), "-rtapi.flavor", "posix")...)
	line := p.waitFor("halhost: thread servo runs")
	require.Contains(t, line, "SCHED_OTHER (not real-time; its HAL priority")
	require.Equal(t, 0, p.interrupt())
}
