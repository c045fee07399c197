#!/bin/sh
# Regenerates the *.golden files: builds LinuxCNC's stepgen.c, unchanged,
# against shim/hal.h with harness.c and runs each *.script through it.
# Usage: LINUXCNC=/path/to/linuxcnc ./gen.sh
set -eu
cd "$(dirname "$0")"
src=${LINUXCNC:?set LINUXCNC to a LinuxCNC source tree}/src/hal/components
mkdir -p build
${CC:-gcc} -O2 -std=gnu11 -w -Ishim -o build/stepgen harness.c "$src/stepgen.c" -lm
for s in *.script; do
	build/stepgen <"$s" >"${s%.script}.golden"
done
rm -r build
