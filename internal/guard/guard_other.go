//go:build !linux

package guard

import (
	"errors"
	"fmt"
	"time"
)

// Guard does not exist outside Linux.
type Guard struct{}

// Start fails: the guard needs Linux.
func Start(prio int, tick time.Duration, onEvent func(Event), onExit func(error)) (*Guard, error) {
	return nil, fmt.Errorf("%w: needs Linux: %w", ErrStart, errors.ErrUnsupported)
}

// Watch does nothing.
func (g *Guard) Watch(tid, prio int, bound, timeout time.Duration, slot int) error { return nil }

// NewSlot has none.
func (g *Guard) NewSlot() (*Slot, int, bool) { return nil, 0, false }

// SlotsInUse is 0.
func (g *Guard) SlotsInUse() int { return 0 }

// FreeSlot does nothing.
func (g *Guard) FreeSlot(int) {}

// Unwatch does nothing.
func (g *Guard) Unwatch(tid int) error { return nil }

// Refused is nil.
func (g *Guard) Refused() error { return nil }

// Pid is 0.
func (g *Guard) Pid() int { return 0 }

// Close does nothing.
func (g *Guard) Close() error { return nil }
