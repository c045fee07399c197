#!/usr/bin/env bash
# Fuzz targets of gortapi, in one list.
#
#   bash .ci/fuzz.sh            open-ended fuzzing, a count budget per target:
#                               run it before you stop working on a parser or
#                               a reader of shared memory
#   bash .ci/fuzz.sh -seeds     each target's seed corpus and committed
#                               findings only (testdata/fuzz): deterministic,
#                               CI's gate (.ci/run)
#   bash .ci/fuzz.sh [-seeds] FuzzName...   only those targets
#
# FUZZ_COUNT (for example 200000x) replaces every target's budget.
#
# A finding of open-ended fuzzing is written by go test under the package's
# testdata/fuzz/<FuzzName>/; the script goes on with the other targets and
# ends listing what failed. Commit the finding (it then runs in every
# `go test`, and in CI) with the fix and a regression test that failed
# before it. The targets are pure or work in private temporary
# directories: no lock or privilege is needed.
#
# The budget is a count of inputs, not a time: Go's fuzzing coordinator
# (go1.26) can end a clean timed run with "context deadline exceeded" when
# its time runs out mid-input (go.dev/issue/75804, fixed in go1.27); a count
# has no deadline to race. 20000 inputs take 1-17 s on a busy 2-core machine;
# the slowest targets get fewer. A target that fails is run again once: a
# real failure was saved under testdata/fuzz and fails the second run too.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# package target [budget]. Groups: kernel and system files (kerneldetect);
# shared memory as untrusted input, corrupted after it was opened (shm, the
# HAL's stats and data segments, the sampler's ring, ipc rings, messages);
# .hal files and names (halfile, names); recorded latency files a user
# replays and the latency tools' argument syntax.
targets='
./kerneldetect FuzzParseCPUList
./kerneldetect FuzzParseStatus
./kerneldetect FuzzParseLimits
./kerneldetect FuzzParseKconfig
./kerneldetect FuzzParsePreempt
./kerneldetect FuzzParseBootParams
./kerneldetect FuzzParseOSRelease
./kerneldetect FuzzParseTracefs
./kerneldetect FuzzDetectFS 5000x
./rtapi/shm FuzzSegmentHeader
./rtapi/hal FuzzMonitorRead
./rtapi/hal FuzzDataRead
./rtapi/hal/sampler FuzzReaderSegment
./rtapi/hal/sampler FuzzParseStreamLine
./rtapi/hal/halfile FuzzParse
./rtapi/hal/halfile FuzzRoundTrip
./rtapi/hal/halfile FuzzNamePrintsBare
./rtapi/hal/halfile FuzzSubstitute
./rtapi/hal/inifile FuzzParse
./rtapi/ipc FuzzRecordRingGarbage
./rtapi/ipc FuzzRecordRingHostile
./rtapi/ipc FuzzStreamRingHostile
./rtapi/msg FuzzDecode
./rtapi/msg FuzzMessageText
./rtapi/latencyfile FuzzReadLatency
./rtapi/latencyfile FuzzReadHistfile 5000x
./examples/internal/latency FuzzParseThreads
./examples/latency-test FuzzCyclictestArgs
./internal/names FuzzCheck
./internal/sys FuzzParseCPUAccounts
'

seeds=false
if [ "${1:-}" = -seeds ]; then
	seeds=true
	shift
fi
only=" $* "
want() { [ "$only" = "  " ] || [[ "$only" == *" $1 "* ]]; }

# Every Fuzz function of the module is in the list, so none is left out of
# CI's gate or of open-ended fuzzing.
missing=$(git grep -h -o '^func Fuzz[A-Za-z0-9_]*' -- '*_test.go' | sed 's/^func //' | sort -u |
	while read -r f; do grep -q " $f\( \|\$\)" <<<"$targets" || echo "$f"; done)
if [ -n "$missing" ]; then
	echo "fuzz.sh: targets missing from its list: $missing" >&2
	exit 1
fi

if $seeds; then
	# One go test per package, its targets' seeds and testdata/fuzz
	# findings only (no -fuzz: nothing random, nothing new).
	for pkg in $(awk 'NF { print $1 }' <<<"$targets" | uniq); do
		names=()
		while read -r p f _; do
			[ "$p" = "$pkg" ] && want "$f" && names+=("$f")
		done <<<"$targets"
		[ ${#names[@]} -gt 0 ] || continue
		re=$(IFS='|'; echo "${names[*]}")
		go test -count=1 -run="^($re)\$" "$pkg"
	done
	exit 0
fi

failed=()
while read -r pkg f n; do
	[ -n "$pkg" ] && want "$f" || continue
	n=${FUZZ_COUNT:-${n:-20000x}}
	echo "=== $f ($pkg, $n)"
	go test -run='^$' -fuzz="^$f\$" -fuzztime="$n" "$pkg" ||
		{ echo "fuzz: $f again, once"; go test -run='^$' -fuzz="^$f\$" -fuzztime="$n" "$pkg"; } ||
		failed+=("$pkg $f")
done <<<"$targets"
if [ ${#failed[@]} -gt 0 ]; then
	printf 'fuzz: failed: %s\n' "${failed[@]}"
	echo "fuzz: commit each new file under the package's testdata/fuzz/ with its fix and a regression test"
	exit 1
fi
echo "fuzz: every target passed"
