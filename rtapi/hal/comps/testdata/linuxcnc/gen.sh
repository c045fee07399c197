#!/bin/sh
# Regenerates the *.golden files: builds LinuxCNC's own component code
# (pid.c, siggen.c, pwmgen.c and debounce.c unchanged; the FUNCTION
# bodies of limit3, scale, sum2, lowpass, ddt, oneshot, timedelay, edge,
# toggle, updown, hypot, wcomp, comp, abs, near, limit2 and mult2.comp)
# against shim/hal.h with harness.c, and runs
# each *.script through it. Usage: LINUXCNC=/path/to/linuxcnc ./gen.sh
set -eu
cd "$(dirname "$0")"
src=${LINUXCNC:?set LINUXCNC to a LinuxCNC source tree}/src/hal/components
mkdir -p build
for c in limit3 scale sum2 lowpass ddt oneshot timedelay edge toggle updown hypot wcomp comp abs near limit2 mult2; do
	sed -n '/^;;$/,$p' "$src/$c.comp" | tail -n +2 >build/$c.body
done
cc="${CC:-gcc} -O2 -std=gnu11 -w -Ishim -I$src"
$cc -o build/pid harness.c load_pid.c -lm
$cc -o build/siggen harness.c load_siggen.c -lm
$cc -o build/limit3 harness.c load_limit3.c -lm
$cc -o build/misc harness.c load_misc.c -lm
$cc -o build/pwmgen harness.c load_pwmgen.c -lm
$cc -o build/debounce harness.c load_debounce.c -lm
$cc -o build/logic harness.c load_logic.c -lm
$cc -o build/math harness.c load_math.c -lm
$cc -o build/muxgen harness.c load_muxgen.c -lm
for s in *.script; do
	bin=${s%%-*}
	build/"${bin%.script}" <"$s" >"${s%.script}.golden"
done
rm -r build
