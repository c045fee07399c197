//go:build !linux

package hal

import (
	"fmt"
	"time"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// Shared memory is Linux-only here: a HAL runs its threads and keeps its
// counters in process, and asking it to publish them is ErrNotSupported.

type statsSeqlock struct{}

func (*statsSeqlock) Write(*threadRecord) {}

type publisher struct {
	seg  interface{ Name() string }
	loss loss
}

func newPublisher(o shm.Options, key uint32) (*publisher, error) {
	return nil, fmt.Errorf("stats segment 0x%08x: shared memory needs Linux: %w", key, rtapi.ErrNotSupported)
}

func (p *publisher) thread(slot int) *statsSeqlock           { return nil }
func (p *publisher) funct(index int, name string) *functSlot { return &functSlot{} }
func (p *publisher) setThreads(n int, base time.Duration)    {}
func (p *publisher) clearFunct(index int)                    {}
func (p *publisher) close() error                            { return nil }
func (p *publisher) guard(f func()) error                    { f(); return nil }
func (p *publisher) lost(v any) bool                         { return false }
func (p *publisher) access(f func())                         { f() }
func (p *publisher) err() error                              { return nil }
