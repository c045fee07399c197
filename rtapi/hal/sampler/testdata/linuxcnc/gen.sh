#!/bin/sh
# Regenerates the *.golden files from LinuxCNC's own halsampler and
# halstreamer code: the printing switch of sampler_usr.c and the field
# parsing loop of streamer_usr.c, extracted unchanged and compiled with
# harness.h by gcc (glibc's printf and strtod/strtol/strtoul).
# Usage: LINUXCNC=/path/to/linuxcnc ./gen.sh
set -eu
cd "$(dirname "$0")"
src=${LINUXCNC:?set LINUXCNC to a LinuxCNC source tree}/src/hal/components
mkdir -p build
sed -n '/if ( tag ) {/,/printf ( "\\n" );/p' "$src/sampler_usr.c" >build/print.body
sed -n '/union hal_stream_data data\[num_pins\];/,/print message/p' "$src/streamer_usr.c" |
	sed '1d' | head -n -2 >build/parse.body
cc="${CC:-gcc} -O2 -std=gnu11 -w -I."
$cc -o build/halsampler halsampler.c
$cc -o build/halstreamer halstreamer.c
build/halsampler <format.input >format.golden
for f in parse-*.input; do
	cfg=${f#parse-}
	build/halstreamer "${cfg%.input}" <"$f" >"${f%.input}.golden"
done
rm -r build
