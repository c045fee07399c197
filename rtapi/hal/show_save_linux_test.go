//go:build linux

package hal

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
)

// showAndSave is what the host prints for show all and save.
func showAndSave(t *testing.T, h *HAL) string {
	t.Helper()
	var b strings.Builder
	for _, what := range []string{"comp", "pin", "param", "sig"} {
		require.NoError(t, h.Show(&b, what, ""), what)
	}
	require.NoError(t, h.Save(&b))
	return b.String()
}

// The host's save and show print names and links from its own memory: a
// group member who rewrites the data segment's name bytes, link fields
// and counts (as a hostile writer would) changes neither. Before, save
// and show read them back from the segment: "net cmd a.out b.in" was
// saved as "net cmd a.out b.in1" once the link fields were swapped, a
// C1 CSI (U+009B) in a name went to the terminal, and a corrupt header
// made save fail.
func TestShowSaveIgnoreRewrittenNamesAndLinks(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h, _, _, reset := dataFixture(t)
	c, err := h.NewComponent("c")
	require.NoError(t, err)
	c.Float("c.in1", In)
	require.NoError(t, c.Ready())
	want := showAndSave(t, h)
	require.Contains(t, want, "net cmd a.out b.in\n")
	require.Contains(t, want, "setp c.in1 0\n")

	l := h.data.l
	hd := &l.Header
	name := func(b *[NameLen]byte, s string) { storeName(b, s) }
	for what, corrupt := range map[string]func(){
		"signal name": func() { name(&l.Signals[0].Name, "evil\u009b2J") },
		"pin names": func() {
			name(&l.Pins[0].Name, "a.outX")
			name(&l.Pins[1].Name, "\u009b]0;title\a")
		},
		"comp and param names": func() {
			name(&l.Comps[0].Name, "\x1b[2J")
			name(&l.Params[0].Name, "a.gain2")
		},
		"link moved": func() {
			atomic.StoreUint32(&l.Pins[1].Signal, 0)
			atomic.StoreUint32(&l.Pins[3].Signal, 1)
		},
		"signal deleted": func() { atomic.StoreUint64(&l.Signals[1].Info, 0) },
		"counts":         func() { atomic.StoreInt64(&hd.NPins, 1); atomic.StoreInt64(&hd.NSignals, 0) },
		"generation odd": func() { atomic.StoreUint64(&hd.Gen, 1) },
		"magic":          func() { atomic.StoreUint64(&hd.Magic, 1) },
	} {
		t.Run(what, func(t *testing.T) {
			reset()
			corrupt()
			assert.Equal(t, want, showAndSave(t, h))
		})
	}
}

// Names read from the segment (halcmd's own show, through Data) are
// printed escaped: no control byte, C1 included, reaches the terminal.
// Before, safeName let U+009B (CSI) and raw 0x80-0x9F bytes through.
func TestWriteShowEscapesNames(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h, d, _, reset := dataFixture(t)
	reset()
	l := h.data.l
	storeName(&l.Comps[0].Name, "a\u009b2J")
	storeName(&l.Pins[0].Name, "a.out\x9b2J")
	storeName(&l.Params[0].Name, "a gain")
	storeName(&l.Signals[0].Name, "cmd\u2028\\")
	s, err := d.Read()
	require.NoError(t, err)
	var b strings.Builder
	for _, what := range []string{"comp", "pin", "param", "sig"} {
		require.NoError(t, WriteShow(&b, what, "", s))
	}
	out := b.String()
	for _, c := range out {
		if c != '\n' && (c < ' ' || c >= 0x7f && c <= 0x9f || c == '\u2028' || c == '\ufffd') {
			t.Fatalf("show prints %U:\n%s", c, out)
		}
	}
	assert.Contains(t, out, `a\u009b2J`)
	assert.Contains(t, out, `a.out\x9b2J ==> cmd\u2028\\`)
	assert.Contains(t, out, `a\x20gain`)
}

// A monitor's thread table and verdict print thread and function names,
// which it reads from the stats segment, escaped. Before, a C1 CSI in a
// name went to the terminal.
func TestWriteThreadsEscapesNames(t *testing.T) {
	t.Parallel()
	ts := []ThreadStats{{Name: "servo\u009b2J", Beat: 1, Functs: []FunctStats{{Name: "f\x9b"}}}}
	var b strings.Builder
	require.NoError(t, WriteThreads(&b, ts))
	require.NoError(t, WriteVerdict(&b, ts))
	out := b.String()
	assert.NotContains(t, out, "\u009b")
	assert.NotContains(t, out, "\x9b")
	assert.Contains(t, out, `thread servo\u009b2J`)
	assert.Contains(t, out, `f\x9b`)
	assert.Contains(t, out, `servo\u009b2J 0s: every cycle`)
}
