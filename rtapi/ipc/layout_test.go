package ipc

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"

	"github.com/gortapi/gortapi/internal/rttest"
)

// Shared layouts are the same on 32-bit and 64-bit architectures, and
// every 64-bit word in them is 8-byte aligned, so that atomics work on 386
// and arm and a 32-bit process reads a 64-bit one's segment.
func TestSharedLayouts(t *testing.T) {
	t.Parallel()
	type odd struct {
		A uint32
		B [3]byte
	}
	type userState struct { // a Seqlock after fields that end off an 8-byte boundary
		Lock  Mutex
		Homed [3]bool
		Pos   Seqlock[[3]float64]
		Odd   Seqlock[odd]
	}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[ringHeader](),
		reflect.TypeFor[Seqlock[[3]float64]](),
		reflect.TypeFor[Seqlock[odd]](),
		reflect.TypeFor[Seqlock[[13]byte]](),
		reflect.TypeFor[userState](),
	} {
		rttest.RequireLayout64(t, typ)
	}
	assert.EqualValues(t, RingHeaderSize, unsafe.Sizeof(ringHeader{}))
	assert.EqualValues(t, 8, unsafe.Sizeof(Mutex{}))
	assert.EqualValues(t, 8, unsafe.Sizeof(Semaphore{}))
	assert.EqualValues(t, 64+2*24, unsafe.Sizeof(Seqlock[[3]float64]{}))
	assert.EqualValues(t, 64+2*8, unsafe.Sizeof(Seqlock[odd]{}), "each copy padded to 8 bytes")
	assert.EqualValues(t, 64+2*16, unsafe.Sizeof(Seqlock[[13]byte]{}))
}

// A Seqlock placed after an odd-sized field of a user's struct works on
// every architecture (on 386 and arm its words used to land at 4 mod 8,
// where the 64-bit atomics panic).
func TestSeqlockInsideStruct(t *testing.T) {
	t.Parallel()
	var state struct {
		Flag uint32
		Pos  Seqlock[[3]float64]
	}
	state.Pos.Write(&[3]float64{1, 2, 3})
	var got [3]float64
	assert.EqualValues(t, 1, state.Pos.Read(&got))
	assert.Equal(t, [3]float64{1, 2, 3}, got)
}
