package pins

import (
	"reflect"
	"testing"

	"github.com/gortapi/gortapi/internal/rttest"
)

// The pin table's words are 64-bit atomics: 8-byte aligned on 32-bit
// architectures too.
func TestBlockLayout(t *testing.T) {
	rttest.RequireLayout64(t, reflect.TypeFor[block]())
}
