//go:build linux

package backend

import (
	"os"
	"testing"

	"github.com/gortapi/gortapi/internal/rttest"
)

// TestMain says, even without -v, how many tests were skipped for want of
// privileges or tools (rttest.Main).
func TestMain(m *testing.M) { os.Exit(rttest.Main(m)) }
