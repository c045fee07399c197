//go:build !linux

package spinguard

import (
	"errors"
	"fmt"
	"time"
)

// Event is what the guard reports about a watched thread.
type Event struct {
	Tid     int
	Demoted bool
	Ran     time.Duration
	Err     error
}

// Guard does not exist outside Linux.
type Guard struct{}

// ErrStart is wrapped by every error of Start.
var ErrStart = errors.New("spin guard did not start")

// Start fails: the guard needs Linux.
func Start(prio int, tick time.Duration, onEvent func(Event), onExit func(error)) (*Guard, error) {
	return nil, fmt.Errorf("%w: needs Linux: %w", ErrStart, errors.ErrUnsupported)
}

// Watch does nothing.
func (g *Guard) Watch(tid, prio int, bound time.Duration) error { return nil }

// Unwatch does nothing.
func (g *Guard) Unwatch(tid int) error { return nil }

// Pid is 0.
func (g *Guard) Pid() int { return 0 }

// Close does nothing.
func (g *Guard) Close() error { return nil }
