package cli

import (
	"bytes"
	"flag"
	"testing"
)

func TestKeyVar(t *testing.T) {
	t.Parallel()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var out bytes.Buffer
	fs.SetOutput(&out)
	var key uint
	KeyVar(fs, &key, "data-key", 0x48414c44, "shared-memory key")
	fs.PrintDefaults()
	if want := "(default 0x48414c44)"; !bytes.Contains(out.Bytes(), []byte(want)) {
		t.Fatalf("-help shows %q, want %s", out.String(), want)
	}
	for in, want := range map[string]uint{"0x48414c50": 0x48414c50, "1212238928": 0x48414c50, "0xffffffff": 0xffffffff} {
		if err := fs.Parse([]string{"-data-key", in}); err != nil || key != want {
			t.Errorf("%s: %#x, %v; want %#x", in, key, err, want)
		}
	}
	for _, bad := range []string{"0x100000000", "-1", "key"} {
		if err := fs.Parse([]string{"-data-key", bad}); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if got := FormatKey(1); got != "0x00000001" {
		t.Errorf("FormatKey(1) = %s", got)
	}
}
