package hal

import (
	"time"

	"go.uber.org/zap"
)

// The link gate's design: HACKING.md, "The HAL's link gate".

const gateCountMask = 1<<32 - 1

// linkOp is one pointer store of a change: ref will point at to.
type linkOp struct {
	ref *word
	to  *uint64
}

// linkChange is a change of links, immutable once published.
type linkChange struct {
	gen uint32
	ops []linkOp
}

func (c *linkChange) apply() {
	for i := range c.ops {
		c.ops[i].ref.Store(c.ops[i].to)
	}
}

// enterCycle marks the thread inside a cycle and applies the change being
// made, if any: one atomic add, no wait.
// RT-safe.
func (h *HAL) enterCycle() {
	if g := uint32(h.gate.Add(1) >> 32); g != 0 {
		// If pending holds a later change than g, g is complete.
		if c := h.pending.Load(); c.gen == g {
			c.apply()
		}
	}
}

// leaveCycle marks the thread out of its cycle.
// RT-safe.
func (h *HAL) leaveCycle() { h.gate.Add(^uint64(0)) }

// setRef points p at to: at once while no thread runs, else at the end of
// the change (commitLinks). Called with h.mu inside begin/endChange.
func (h *HAL) setRef(p *pin, to *uint64) {
	if !h.running {
		p.ref.Store(to)
		return
	}
	h.ops = append(h.ops, linkOp{ref: p.ref, to: to})
}

// commitLinks applies the collected stores between cycles. Called with h.mu.
func (h *HAL) commitLinks(op string) error {
	ops := h.ops
	h.ops = nil
	if len(ops) == 0 {
		return nil
	}
	h.changeGen++
	if h.changeGen == 0 {
		h.changeGen = 1
	}
	c := &linkChange{gen: h.changeGen, ops: ops}
	h.pending.Store(c)
	armed := uint64(c.gen) << 32
	deadline := time.Now().Add(h.opts.StopTimeout)
	for !h.gate.CompareAndSwap(0, armed) {
		if time.Now().After(deadline) {
			// A function blocks: apply anyway, so the pins agree with
			// the reported wiring, and warn that a cycle saw it half made.
			c.apply()
			h.log.Warn("hal: links changed while a thread was inside a cycle",
				zap.String("op", op), zap.Duration("waited", h.opts.StopTimeout))
			return nil
		}
		time.Sleep(20 * time.Microsecond) // set-up path: waiting for the threads' idle time
	}
	c.apply()
	h.gate.And(gateCountMask)
	return nil
}
