package hal

import (
	"reflect"
	"testing"

	"github.com/gortapi/gortapi/internal/rttest"
)

// The stats segment's 64-bit counters are atomics: they must be 8-byte
// aligned on 32-bit architectures too, and halmon built for one
// architecture reads a host built for another.
func TestStatsLayout(t *testing.T) {
	rttest.RequireLayout64(t, reflect.TypeFor[statsLayout]())
}
