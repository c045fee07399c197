package sampler

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/gortapi/gortapi/rtapi/hal"
)

// LineMax is the most bytes halstreamer takes as one line, its newline
// included: LinuxCNC's fgets into a 4000-byte buffer. A longer line is
// read as several.
const LineMax = 4000 - 1

// ParseStreamLine reads one line of halstreamer input into dst, one word
// per pin of types (as hal.FormatValue reads them), exactly as
// LinuxCNC's halstreamer does: each field after optional white space is
// read by strtod (float), strtol (s32, s64), strtoul (u32, u64) in base
// 10, or is the character 0 or 1 (bit), and must end in white space; the
// line's newline ends the last. An s32 or u32 field keeps the low 32
// bits of what strtol or strtoul returns, which saturates at 64 bits.
// Fields after the last pin's are ignored. The line stops at its first
// NUL byte, as a C string.
//
// It returns msg "" on success, else the field (from 0) and
// halstreamer's message: "bit value not 0 or 1", "premature end of
// line" or "bad character".
func ParseStreamLine(types []hal.Type, line []byte, dst []uint64) (field int, msg string) {
	for i, c := range line {
		if c == 0 {
			line = line[:i]
			break
		}
	}
	cp := 0
	for n, t := range types {
		for cp < len(line) && isSpace(line[cp]) {
			cp++
		}
		var end int
		switch t {
		case hal.TypeFloat:
			var f float64
			f, end = strtod(line, cp)
			dst[n] = math.Float64bits(f)
		case hal.TypeBit:
			switch {
			case cp < len(line) && line[cp] == '0':
				dst[n], end = 0, cp+1
			case cp < len(line) && line[cp] == '1':
				dst[n], end = 1, cp+1
			default:
				return n, "bit value not 0 or 1"
			}
		case hal.TypeS32:
			var v int64
			v, end = strtol(line, cp)
			dst[n] = uint64(int64(int32(v)))
		case hal.TypeU32:
			var v uint64
			v, end = strtoul(line, cp)
			dst[n] = uint64(uint32(v))
		case hal.TypeS64:
			var v int64
			v, end = strtol(line, cp)
			dst[n] = uint64(v)
		default:
			dst[n], end = strtoul(line, cp)
		}
		if end >= len(line) {
			return n, "premature end of line"
		}
		if !isSpace(line[end]) {
			return n, "bad character"
		}
		cp = end
	}
	return len(types), ""
}

// isSpace is C's isspace in the C locale.
func isSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }

// sign reads an optional + or - at i: the index after it and whether it
// was -.
func sign(s []byte, i int) (int, bool) {
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		return i + 1, s[i] == '-'
	}
	return i, false
}

// strtoul is C's strtoul(s+i, &end, 10) on a 64-bit long: the value and
// the index after what it read (i itself when it read no digit). A
// leading - negates modulo 2^64; an overflow gives the maximum.
func strtoul(s []byte, i int) (uint64, int) {
	j, neg := sign(s, i)
	if j >= len(s) || !isDigit(s[j]) {
		return 0, i
	}
	var v uint64
	over := false
	for ; j < len(s) && isDigit(s[j]); j++ {
		d := uint64(s[j] - '0')
		if v > (math.MaxUint64-d)/10 {
			over = true
		}
		v = v*10 + d
	}
	if over {
		return math.MaxUint64, j
	}
	if neg {
		v = -v
	}
	return v, j
}

// strtol is C's strtol(s+i, &end, 10) on a 64-bit long: saturated at
// the int64 limits.
func strtol(s []byte, i int) (int64, int) {
	j, neg := sign(s, i)
	if j >= len(s) || !isDigit(s[j]) {
		return 0, i
	}
	var v uint64
	over := false
	for ; j < len(s) && isDigit(s[j]); j++ {
		d := uint64(s[j] - '0')
		if v > (math.MaxUint64-d)/10 {
			over = true
		}
		v = v*10 + d
	}
	switch {
	case neg && (over || v > 1<<63):
		return math.MinInt64, j
	case neg:
		return int64(-v), j
	case over || v > math.MaxInt64:
		return math.MaxInt64, j
	}
	return int64(v), j
}

// strtod is glibc's strtod(s+i, &end): a decimal or hexadecimal number,
// inf, infinity or nan (with an optional (chars)), correctly rounded;
// overflow gives an infinity. It returns 0 and i when nothing reads.
func strtod(s []byte, i int) (float64, int) {
	j, neg := sign(s, i)
	signed := func(f float64) float64 {
		if neg { // strtod negates by the sign bit: -0 and -nan too
			return math.Float64frombits(math.Float64bits(f) ^ 1<<63)
		}
		return f
	}
	if end, ok := word(s, j, "infinity"); ok {
		return signed(math.Inf(1)), end
	}
	if end, ok := word(s, j, "inf"); ok {
		return signed(math.Inf(1)), end
	}
	if end, ok := word(s, j, "nan"); ok {
		bits := uint64(0x7ff8000000000000) // glibc's NaN, not Go's math.NaN()
		if end < len(s) && s[end] == '(' {
			k := end + 1
			for k < len(s) && (isDigit(s[k]) || s[k]|0x20 >= 'a' && s[k]|0x20 <= 'z' || s[k] == '_') {
				k++
			}
			if k < len(s) && s[k] == ')' {
				bits |= nanPayload(string(s[end+1 : k]))
				end = k + 1
			}
		}
		return signed(math.Float64frombits(bits)), end
	}
	if j+1 < len(s) && s[j] == '0' && s[j+1]|0x20 == 'x' {
		if end, ok := hexMantissa(s, j+2); ok {
			text := "0x" + string(s[j+2:end])
			if e := exponent(s, end, 'p'); e > end {
				text += string(s[end:e])
				end = e
			} else {
				text += "p0"
			}
			f, _ := strconv.ParseFloat(text, 64)
			return signed(f), end
		}
		// "0x" with no hex digit: the 0 alone reads.
		return signed(0), j + 1
	}
	k := j
	digits := 0
	for ; k < len(s) && isDigit(s[k]); k++ {
		digits++
	}
	if k < len(s) && s[k] == '.' {
		k++
		for ; k < len(s) && isDigit(s[k]); k++ {
			digits++
		}
	}
	if digits == 0 {
		return 0, i
	}
	k = max(k, exponent(s, k, 'e'))
	f, _ := strconv.ParseFloat(string(s[j:k]), 64) // overflow: ±Inf, as strtod's HUGE_VAL
	return signed(f), k
}

// nanPayload is the mantissa glibc's strtod gives "nan(seq)": seq read
// by strtoull in base 0 if it reads whole, kept to the 51 bits below the
// quiet bit.
func nanPayload(seq string) uint64 {
	if strings.ContainsRune(seq, '_') || len(seq) > 1 && seq[0] == '0' && strings.ContainsRune("bBoO", rune(seq[1])) {
		return 0 // Go's base 0 reads these; C's strtoull does not
	}
	v, err := strconv.ParseUint(seq, 0, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		if seq != "" {
			return 0
		}
	}
	return v & (1<<51 - 1)
}

// word matches w at s[i:], any case: the index after it.
func word(s []byte, i int, w string) (int, bool) {
	if len(s)-i < len(w) {
		return i, false
	}
	for k := range len(w) {
		if s[i+k]|0x20 != w[k] {
			return i, false
		}
	}
	return i + len(w), true
}

// hexMantissa reads hex digits with an optional point from i, at least
// one digit: the index after them.
func hexMantissa(s []byte, i int) (int, bool) {
	k, digits := i, 0
	for ; k < len(s) && isHex(s[k]); k++ {
		digits++
	}
	if k < len(s) && s[k] == '.' {
		k++
		for ; k < len(s) && isHex(s[k]); k++ {
			digits++
		}
	}
	return k, digits > 0
}

// exponent reads an exponent (letter e or p, either case, an optional
// sign, decimal digits) at i: the index after it, or i if there is none.
func exponent(s []byte, i int, letter byte) int {
	if i >= len(s) || s[i]|0x20 != letter {
		return i
	}
	k, _ := sign(s, i+1)
	if k >= len(s) || !isDigit(s[k]) {
		return i
	}
	for k < len(s) && isDigit(s[k]) {
		k++
	}
	return k
}
