#!/bin/sh
# runtests.sh runs LinuxCNC-style HAL tests as LinuxCNC's scripts/runtests
# does: in each test's directory, "halrun -f test.hal > result 2> stderr"
# must exit 0, and result must equal expected byte for byte, or
# "./checkresult result" must exit 0. halrun, halsampler and halstreamer
# are those on PATH:
#
#	go build -o /tmp/bin ./examples/halrun ./examples/halsampler ./examples/halstreamer
#	PATH=/tmp/bin:$PATH examples/halrun/testdata/runtests.sh DIR...
#
# Each DIR is a test (it holds test.hal) or holds tests at any depth. A
# directory with a file "skip" is skipped; the file says why. It writes
# result and stderr into the test directories, prints one line a test and
# exits 1 if any failed.
set -u
failed=0 passed=0 skipped=0
for root in "$@"; do
	for hal in $(find "$root" -name test.hal | sort); do
		dir=$(dirname "$hal")
		if [ -e "$dir/skip" ]; then
			echo "skip $dir: $(cat "$dir/skip")"
			skipped=$((skipped + 1))
			continue
		fi
		(cd "$dir" && halrun -f test.hal > result 2> stderr)
		rc=$?
		if [ "$rc" -ne 0 ]; then
			echo "FAIL $dir: halrun exited $rc; stderr:"
			sed 's/^/	/' "$dir/stderr"
			failed=$((failed + 1))
			continue
		fi
		if [ -e "$dir/expected" ]; then
			if ! cmp -s "$dir/result" "$dir/expected"; then
				echo "FAIL $dir: result differs from expected:"
				diff "$dir/expected" "$dir/result" | head -20 | sed 's/^/	/'
				failed=$((failed + 1))
				continue
			fi
		elif [ -x "$dir/checkresult" ]; then
			if ! out=$(cd "$dir" && ./checkresult result 2>&1); then
				echo "FAIL $dir: ./checkresult result failed:"
				echo "$out" | sed 's/^/	/'
				failed=$((failed + 1))
				continue
			fi
		else
			echo "FAIL $dir: neither expected nor checkresult"
			failed=$((failed + 1))
			continue
		fi
		echo "ok   $dir"
		passed=$((passed + 1))
	done
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
