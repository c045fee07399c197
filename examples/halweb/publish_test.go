package main

import (
	"testing"

	"github.com/gortapi/gortapi/examples/internal/scope"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// A capture is counted (status's Seq) only once it is stored, so a page
// or test that sees capture N can export it. Before, Seq moved before the
// capture's messages were encoded and stored, and TestScopeModes read a
// nil lastCapture once in four runs.
func TestCaptureCountedWhenStored(t *testing.T) {
	host := newSimHost(t)
	s, _, _ := serve(t, host, nil)
	sc := s.scope
	sc.mu.Lock()
	gen := sc.gen
	sc.mu.Unlock()
	c := &scope.Capture{Types: []hal.Type{hal.TypeFloat}, Total: 20000}
	for i := range c.Total {
		c.Rows = append(c.Rows, scope.Row{Cycle: uint64(i), Values: []uint64{0}})
	}
	chans := []channel{{Name: "x", Type: hal.TypeFloat}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 20 {
			sc.publish(gen, c, ScopeConfig{}, chans)
		}
	}()
	for {
		select {
		case <-done:
			return
		default:
		}
		sc.mu.Lock()
		seq, last := sc.seq, sc.last
		sc.mu.Unlock()
		if seq > 0 && last == nil {
			t.Fatalf("capture %d counted before it was stored", seq)
		}
	}
}
