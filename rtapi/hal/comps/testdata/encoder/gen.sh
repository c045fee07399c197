#!/bin/sh
# Regenerates the *.golden files of encoder and sim_encoder: builds
# LinuxCNC's encoder.c and sim_encoder.c unchanged against
# ../linuxcnc/shim/hal.h with ../linuxcnc/harness.c and runs each
# *.script through it. Usage: LINUXCNC=/path/to/linuxcnc ./gen.sh
set -eu
cd "$(dirname "$0")"
src=${LINUXCNC:?set LINUXCNC to a LinuxCNC source tree}/src/hal/components
mkdir -p build
${CC:-gcc} -O2 -std=gnu11 -w -I../linuxcnc/shim -I"$src" -o build/encoder \
	../linuxcnc/harness.c load_encoder.c load_sim_encoder.c -lm
for s in *.script; do
	build/encoder <"$s" >"${s%.script}.golden"
done
rm -r build
