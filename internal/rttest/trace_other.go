//go:build !linux

package rttest

import "testing"

// TraceInstance skips t: tracefs is Linux's.
func TraceInstance(t testing.TB) string {
	t.Helper()
	t.Skip("tracefs needs Linux")
	return ""
}
