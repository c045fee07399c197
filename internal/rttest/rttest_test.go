package rttest

import (
	"strings"
	"testing"
)

// TestSkipSummary: a skipped test is counted, with what it lacked, so
// that Main can say so without -v.
func TestSkipSummary(t *testing.T) {
	skipped.by = nil // -count=N runs this again
	if s := SkipSummary(); s != "" {
		t.Fatalf("nothing skipped yet: %q", s)
	}
	t.Setenv(RequireEnv, "") // this test wants the skip, even in CI
	t.Run("lacks a tool", func(t *testing.T) {
		RequireTool(t, "gortapi-no-such-tool", "apt-get install nothing")
		t.Fatal("RequireTool did not skip")
	})
	s := SkipSummary()
	if !strings.Contains(s, "1 test SKIPPED: 1 for gortapi-no-such-tool (apt-get install nothing)") || !strings.Contains(s, RequireEnv+"=1") {
		t.Fatalf("summary %q", s)
	}
	if p := RequireTool(t, "sh", "a shell"); p == "" {
		t.Fatal("sh not found")
	}
}
