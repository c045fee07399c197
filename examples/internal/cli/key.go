package cli

import (
	"flag"
	"fmt"
	"strconv"
)

// KeyVar defines a shared-memory key flag: -help shows its default in
// hex (0x48414c44), as segment names spell keys; a value is read in hex
// (0x prefix), octal (0 prefix) or decimal, and one past 32 bits is
// refused.
func KeyVar(fs *flag.FlagSet, p *uint, name string, value uint, usage string) {
	*p = value
	fs.Var((*keyValue)(p), name, usage)
}

// FormatKey writes a shared-memory key as the tools print it: 0x and
// eight hex digits.
func FormatKey(key uint32) string { return fmt.Sprintf("0x%08x", key) }

type keyValue uint

func (k *keyValue) String() string {
	if k == nil {
		return FormatKey(0)
	}
	return FormatKey(uint32(*k))
}

func (k *keyValue) Set(s string) error {
	v, err := strconv.ParseUint(s, 0, 32)
	if err != nil {
		return fmt.Errorf("a 32-bit key, e.g. 0x48414c44: %w", err)
	}
	*k = keyValue(v)
	return nil
}
