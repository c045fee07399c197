//go:build linux

package ipc

import (
	"encoding/binary"
	"testing"
)

// ringProgram runs a fuzzer-chosen sequence of operations on a ring that
// ends right before a PROT_NONE page: the owner's calls, interleaved with
// writes of chosen values into the shared header and data, as another
// process could make at any time after the ring was opened. Each operation
// is one opcode byte and its operands.
type ringProgram struct {
	prog []byte
}

func (p *ringProgram) next() (byte, bool) {
	if len(p.prog) == 0 {
		return 0, false
	}
	b := p.prog[0]
	p.prog = p.prog[1:]
	return b, true
}

func (p *ringProgram) u64() uint64 {
	var b [8]byte
	n := copy(b[:], p.prog)
	p.prog = p.prog[n:]
	return binary.LittleEndian.Uint64(b[:])
}

// scribble writes a chosen value into a header field or the data area of
// ring memory mem.
func (p *ringProgram) scribble(mem []byte, op byte) {
	v := p.u64()
	switch op % 6 {
	case 0:
		storeField(mem[64:], 8, v) // head
	case 1:
		storeField(mem[128:], 8, v) // tail
	case 2:
		storeField(mem[8:], 8, v) // capacity: read only at open
	case 3:
		storeField(mem[196:], 4, v) // closed
	case 4: // a record header at an aligned place in the data
		data := mem[RingHeaderSize:]
		at := int(v>>32) % (len(data) / 8) * 8
		storeField(data[at:], 4, v&0xFFFF_FFFF)
		storeField(data[at+4:], 4, v>>62)
	case 5: // any byte
		data := mem[RingHeaderSize:]
		data[int(v>>8)%len(data)] = byte(v)
	}
}

func FuzzRecordRingHostile(f *testing.F) {
	f.Add([]byte{0, 5, 1, 10, 2, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 1})
	f.Add([]byte{0, 200, 0, 200, 10, 0, 0, 0, 0, 0, 0, 0, 0x40, 1, 1})
	f.Add([]byte{11, 0xFF, 7, 0, 0, 0, 0, 0, 0, 1, 3, 0, 0})
	f.Add([]byte{0, 100, 0, 100, 14, 0, 0, 0, 1, 0, 0, 0, 0, 1, 4})
	mem := guardedMem(f, RingSize(256)) // reused: the fuzz function runs one input at a time
	f.Fuzz(func(t *testing.T, prog []byte) {
		q, err := InitRecordRing(mem)
		if err != nil {
			t.Fatal(err)
		}
		p := &ringProgram{prog: prog}
		rec := make([]byte, 256)
		buf := make([]byte, 256)
		for range 200 {
			op, ok := p.next()
			if !ok {
				return
			}
			switch op % 16 {
			case 0, 6:
				n, _ := p.next()
				err = q.Put(rec[:int(n)%(q.MaxRecord()+1)])
				mustBe(t, err, ErrFull, ErrCorrupt)
			case 1, 7:
				n, err := q.Get(buf)
				mustBe(t, err, ErrEmpty, ErrCorrupt)
				if n > q.MaxRecord() {
					t.Fatalf("record of %d bytes", n)
				}
			case 2:
				b, err := q.Peek()
				mustBe(t, err, ErrEmpty, ErrCorrupt)
				if len(b) > q.MaxRecord() {
					t.Fatalf("record of %d bytes", len(b))
				}
				mustBe(t, q.Consume(), ErrEmpty)
			case 3:
				_, err := q.Discard()
				mustBe(t, err, ErrCorrupt)
			case 4:
				mustBe(t, q.Wait(1), ErrTimeout, ErrClosed)
			case 5: // a second handle opened on the damaged memory
				if q2, err := OpenRecordRing(mem); err == nil {
					_, err = q2.Get(buf)
					mustBe(t, err, ErrEmpty, ErrCorrupt)
					mustBe(t, q2.Put(rec[:8]), ErrFull, ErrCorrupt)
				}
			default:
				p.scribble(mem, op)
			}
		}
	})
}

func FuzzStreamRingHostile(f *testing.F) {
	f.Add([]byte{0, 50, 1, 30, 8, 0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 40})
	f.Add([]byte{0, 64, 9, 100, 0, 0, 0, 0, 0, 0, 0, 0, 20, 1, 64})
	mem := guardedMem(f, RingSize(64))
	f.Fuzz(func(t *testing.T, prog []byte) {
		s, err := InitStreamRing(mem)
		if err != nil {
			t.Fatal(err)
		}
		p := &ringProgram{prog: prog}
		chunk := make([]byte, 100)
		buf := make([]byte, 100)
		for range 200 {
			op, ok := p.next()
			if !ok {
				return
			}
			switch op % 12 {
			case 0, 4:
				n, _ := p.next()
				want := int(n) % len(chunk)
				got, err := s.Write(chunk[:want])
				mustBe(t, err, ErrFull, ErrCorrupt)
				if got > want {
					t.Fatalf("wrote %d of %d", got, want)
				}
			case 1, 5:
				n, _ := p.next()
				want := int(n) % len(buf)
				got, err := s.Read(buf[:want])
				mustBe(t, err, ErrEmpty, ErrCorrupt)
				if got > want {
					t.Fatalf("read %d into %d", got, want)
				}
			case 2:
				_, err := s.Discard()
				mustBe(t, err, ErrCorrupt)
			case 3:
				if s2, err := OpenStreamRing(mem); err == nil {
					_, err = s2.Read(buf)
					mustBe(t, err, ErrEmpty, ErrCorrupt)
				}
			default:
				p.scribble(mem, op)
			}
		}
	})
}

func mustBe(t *testing.T, err error, allowed ...error) {
	t.Helper()
	if !typed(err, allowed...) {
		t.Fatalf("untyped error %v", err)
	}
}
