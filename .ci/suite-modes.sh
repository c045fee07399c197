#!/usr/bin/env bash
# suite-modes.sh runs the README's test command (go test -race -count=1
# ./...) from a clean clone of HEAD, N times in a row, in each mode asked:
#
#   unpriv  as uid/gid 65534 with no supplementary groups, no capabilities
#           (a user who is not root: privileged tests must skip)
#   root    as root, GORTAPI_REQUIRE_RT=1 (privileged tests must run)
#   stress  as root, GORTAPI_REQUIRE_RT=1, beside `stress-ng --cpu 2`
#
# Usage: .ci/suite-modes.sh [-n N] MODE...   (default: -n 3 unpriv root stress)
#
# Root runs hold /tmp/gortapi-test.lock, as every SCHED_FIFO test run on a
# shared machine does. Each run's output is kept under $SUITE_OUT (default
# /tmp/gortapi-suite-modes) as MODE-K.log; one line per run says how it
# ended, and the script exits non-zero when any run failed.
set -u
N=3
if [ "${1:-}" = -n ]; then
	N=$2
	shift 2
fi
[ $# -gt 0 ] || set -- unpriv root stress
OUT=${SUITE_OUT:-/tmp/gortapi-suite-modes}
ROOT=$(git rev-parse --show-toplevel) || exit 2
HEAD=$(git -C "$ROOT" rev-parse --short HEAD)
SHA=$(git -C "$ROOT" rev-parse HEAD) # every run tests this commit, even if HEAD moves meanwhile
mkdir -p "$OUT"
[ "$(id -u)" = 0 ] || { echo "suite-modes: run as root (it drops to uid 65534 itself)" >&2; exit 2; }
command -v setpriv >/dev/null || { echo "suite-modes: setpriv missing (apt-get install util-linux)" >&2; exit 2; }

GO=$(command -v go)
GOROOT=$("$GO" env GOROOT)
MODCACHE=$("$GO" env GOMODCACHE)
fail=0

run() { # mode k
	local mode=$1 k=$2 dir log t0 rc
	dir=$(mktemp -d /tmp/gortapi-suite.XXXXXX)
	chmod 755 "$dir"
	git clone -q "$ROOT" "$dir/src" && git -C "$dir/src" checkout -q "$SHA" || return 1
	log="$OUT/$mode-$k.log"
	t0=$(date +%s)
	case $mode in
	unpriv)
		# A private module cache and build cache the user owns: the
		# root's are not readable by others.
		mkdir -p "$dir/home"
		cp -a "$MODCACHE" "$dir/home/modcache" 2>/dev/null || true
		chown -R 65534:65534 "$dir"
		(cd "$dir/src" && env -i PATH="$GOROOT/bin:/usr/local/bin:/usr/bin:/bin" HOME="$dir/home" \
			GOMODCACHE="$dir/home/modcache" GOCACHE="$dir/home/cache" GOFLAGS=-buildvcs=false GOPROXY=off \
			setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
			go test -race -count=1 ./... >"$log" 2>&1)
		rc=$?
		;;
	root | stress)
		local sp=
		if [ "$mode" = stress ]; then
			command -v stress-ng >/dev/null || { echo "suite-modes: stress-ng missing (apt-get install stress-ng)" >&2; return 1; }
			stress-ng --cpu 2 --quiet &
			sp=$!
		fi
		(cd "$dir/src" && GORTAPI_REQUIRE_RT=1 flock -o /tmp/gortapi-test.lock go test -race -count=1 ./... >"$log" 2>&1)
		rc=$?
		[ -z "$sp" ] || { kill "$sp"; wait "$sp" 2>/dev/null; }
		;;
	*)
		echo "suite-modes: unknown mode $mode" >&2
		return 1
		;;
	esac
	printf '%s %s run %d/%d: %s in %ds, %s packages ok, %s FAIL lines, load %s\n' \
		"$HEAD" "$mode" "$k" "$N" "$([ $rc = 0 ] && echo pass || echo FAIL)" $(($(date +%s) - t0)) \
		"$(grep -c '^ok ' "$log")" "$(grep -c '^FAIL\|^--- FAIL' "$log")" "$(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/summary.txt"
	rm -rf "$dir"
	return $rc
}

for mode in "$@"; do
	for k in $(seq 1 "$N"); do
		run "$mode" "$k" || fail=1
	done
done
exit $fail
