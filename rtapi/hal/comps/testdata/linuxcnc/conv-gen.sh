#!/bin/sh
# Regenerates conv.golden: makes every conv_IN_OUT.comp that LinuxCNC's
# Submakefile lists (CONVERTERS) from conv.comp.in with its mkconv.sh,
# compiles their FUNCTION bodies with halcompile's macros, and prints for
# each, with clamp FALSE and then TRUE (out and out-of-range starting at 0),
# "NAME CLAMP IN OUT OUT-OF-RANGE" after each input of conv-inputs.h.
# Usage: LINUXCNC=/path/to/linuxcnc ./conv-gen.sh >conv.golden
set -eu
cd "$(dirname "$0")"
src=${LINUXCNC:?set LINUXCNC to a LinuxCNC source tree}/src/hal/components
b=$(mktemp -d)
cat >$b/rtapi_stdint.h <<'H'
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <math.h>
typedef bool rtapi_bool; typedef int32_t rtapi_s32; typedef uint32_t rtapi_u32;
typedef int64_t rtapi_sint; typedef uint64_t rtapi_uint; typedef double rtapi_real; typedef int32_t rtapi_si32; typedef uint32_t rtapi_ui32;
#define RTAPI_INT32_MAX INT32_MAX
#define RTAPI_INT32_MIN INT32_MIN
#define RTAPI_UINT32_MAX UINT32_MAX
#define RTAPI_INT64_MAX INT64_MAX
#define RTAPI_INT64_MIN INT64_MIN
#define RTAPI_UINT64_MAX UINT64_MAX
H
main=$b/main.c
echo '#include "rtapi_stdint.h"' >$main
echo '#include "conv-inputs.h"' >>$main
pairs=""
for n in $(sed -n 's/^ *conv_\([a-z0-9]*_[a-z0-9]*\)\.comp.*/\1/p' $src/Submakefile); do
	i=${n%_*} o=${n#*_}
	pairs="$pairs $n"
	sh $src/mkconv.sh $i $o <$src/conv.comp.in >$b/$n.comp
	ti=$(grep '^pin in' $b/$n.comp | awk '{print $3}'); to=$(grep '^pin out' $b/$n.comp | head -1 | awk '{print $3}')
	cat >>$main <<C
static struct { rtapi_$ti i_; rtapi_$to o_; bool oor, clamp; } s_$n;
#define in (s_$n.i_)
#define out (s_$n.o_)
#define out_set(v) (s_$n.o_ = (v))
#define out_of_range_set(v) (s_$n.oor = (v))
#define clamp_ (s_$n.clamp)
#define FUNCTION(x) static __attribute__((noinline)) void f_$n(void)
C
	sed -n '/^;;$/,$p' $b/$n.comp | tail -n +2 | grep -v '#include' >>$main
	echo '#undef in
#undef out
#undef out_set
#undef out_of_range_set
#undef clamp_
#undef FUNCTION' >>$main
		echo "static void r_$n(void) { for (int c = 0; c < 2; c++) { s_$n.clamp = c; s_$n.oor = 0; s_$n.o_ = 0;
	for (unsigned k = 0; k < sizeof in_$i / sizeof in_$i[0]; k++) { s_$n.i_ = in_$i[k]; f_$n(); printf(\"conv_$n %d \", c); show_$i(s_$n.i_); putchar(' '); show_$o(s_$n.o_); printf(\" %d\", s_$n.oor); putchar(10); } } }" >>$main
done
echo 'int main(void) {' >>$main
for n in $pairs; do echo "r_$n();" >>$main; done
echo 'return 0; }' >>$main
${CC:-gcc} -O2 -std=gnu11 -w -I$b -I. -o $b/conv $main
$b/conv
rm -r $b
