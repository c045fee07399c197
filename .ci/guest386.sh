#!/usr/bin/env bash
# linux/386 tests inside a guest, for machines whose own kernel runs no 32-bit
# binary (some paravirtualised hosts of CI's kind: "exec format error" even
# with CONFIG_IA32_EMULATION=y; Debian's qemu-i386 user-mode emulator crashes
# Go binaries at start-up, so it is no way out either).
#
# It builds every package's test binary for GOARCH=386 (CGO_ENABLED=0,
# `go test -c`), packs them with the module's tracked files (tests read their
# testdata/ from the package directory) and a static busybox into an
# initramfs, and boots Debian's standard amd64 kernel under qemu (software
# emulation, TCG; no KVM needed). That kernel runs 32-bit binaries
# (CONFIG_IA32_EMULATION=y), and its init, root with every capability, runs
# each test binary in its package's directory with GORTAPI_REQUIRE_RT=1, so
# the real-time tests run there on SCHED_FIFO, as in CI's native 386 step.
#
# What the guest lacks is the Go toolchain and Debian's tools (cyclictest,
# stress-ng, rsvg-convert): GORTAPI_TOOLS=absent makes rttest.RequireTool skip
# there instead of failing, and each skip is counted and printed below. Those
# tests run in CI's 64-bit step.
#
# Exit 0 = every test binary exited 0. Prints per package the counts of
# passed, failed and skipped tests, the output of any failed one, and a
# closing line "guest386: N passed, N failed, N skipped".
#
# Environment (all optional, besides those of .ci/kernels.sh):
#   GORTAPI_GUEST_TIMEOUT  seconds the whole guest run may take (default 2400)
#   GORTAPI_QEMU_SMP       guest CPUs (default 2)
#   GORTAPI_GUEST_RUN      a -test.run pattern for every binary (default: all)
#   GORTAPI_GUEST_PKGS     packages to test, as ./dir patterns (default ./...)
#   GORTAPI_GUEST_SKIP     a -test.skip pattern for every binary (default: the
#                          spin-guard reproduction and the task-set test of
#                          rtapi, which hung in this 386 guest once (not yet
#                          understood; internal/spinguard's own tests pass
#                          here); they run in the 64-bit step and, with RT
#                          throttling off, in the real-kernel lane)
set -euo pipefail
shopt -s inherit_errexit

LANE=guest386
# shellcheck source=kernels.sh
source "$(dirname "${BASH_SOURCE[0]}")/kernels.sh"
GUEST_TIMEOUT=${GORTAPI_GUEST_TIMEOUT:-2400}
SMP=${GORTAPI_QEMU_SMP:-2}
RUN=${GORTAPI_GUEST_RUN:-}
PKGS=${GORTAPI_GUEST_PKGS:-./...}
SKIP=${GORTAPI_GUEST_SKIP-^(TestSpinGuardEndsASpinOverAnOrdinaryThread|TestTaskSetNeverStalls)\$}
MARK=GORTAPI-GUEST386-5b1e07

ensure_tools
VMLINUZ=$(fetch_kernel std)
BUSYBOX=$(static_busybox)
log "kernel: $VMLINUZ"
[ -z "$SKIP" ] || log "skipped in the guest (see GORTAPI_GUEST_SKIP above): $SKIP"

# ---------------------------------------------------------------- build

t=$(date +%s.%N)
r=$WORK/initramfs
mkdir -p "$r"/bin "$r"/dev "$r"/proc "$r"/sys "$r"/tmp "$r"/tests "$r"/src
cp "$BUSYBOX" "$r/bin/busybox"
cd "$ROOT"
mod=$(go list -m)
# The module's tracked files, as a test finds them next to its package.
git ls-files -z | (cd "$ROOT" && cpio --quiet --null -pdm "$r/src") ||
	die "copying the module's tracked files failed"
pkgs=$(GOARCH=386 go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' $PKGS | sed '/^$/d')
[ -n "$pkgs" ] || die "no package with tests in $PKGS"
: >"$r/tests/list"
for p in $pkgs; do
	rel=${p#"$mod"}
	rel=${rel#/}
	name=$(printf '%s' "${rel:-.}" | tr / _)
	GOARCH=386 CGO_ENABLED=0 go test -c -ldflags='-s -w' -o "$r/tests/$name.test" "./$rel" ||
		die "GOARCH=386 go test -c ./$rel failed"
	printf '%s %s\n' "$name" "${rel:-.}" >>"$r/tests/list"
done
log "$(wc -l <"$r/tests/list") linux/386 test binaries built in $(elapsed "$t") s ($(du -sm "$r/tests" | cut -f1) MiB)"

cat >"$r/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin HOME=/tmp TMPDIR=/tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/shm && mount -t tmpfs -o mode=1777 shm /dev/shm
chmod 1777 /tmp
ip link set lo up
exec </dev/console >/dev/console 2>&1
out=/dev/ttyS1
[ -c \$out ] || out=/dev/console
export GORTAPI_REQUIRE_RT=1 GORTAPI_TOOLS=absent
{
	echo "$MARK-UNAME \$(uname -m) \$(uname -r) cpus \$(grep -c ^processor /proc/cpuinfo)"
	while read -r name dir; do
		echo "$MARK-BEGIN \$name \$dir"
		s=\$(date +%s)
		for try in 1 2; do
			(cd "/src/\$dir" && timeout 1500 "/tests/\$name.test" -test.v -test.count=1 -test.timeout=20m ${RUN:+-test.run "'$RUN'"} ${SKIP:+-test.skip "'$SKIP'"} >/tmp/run.out 2>&1)
			rc=\$?
			# qemu's TCG sometimes sets the trap flag in a 386
			# guest (SIGTRAP, eflags 0xfffcffff, in the runtime's
			# CMPXCHG8B loop): an emulator fault, not the test's.
			# The binary runs once more; the first run is kept,
			# prefixed so that it counts no test.
			if [ \$rc != 0 ] && [ \$try = 1 ] && grep -q '^SIGTRAP: trace trap' /tmp/run.out; then
				echo "$MARK-EMUFAULT \$name"
				sed 's/^/    emu| /' /tmp/run.out
				continue
			fi
			cat /tmp/run.out
			break
		done
		echo "$MARK-END \$name \$rc \$((\$(date +%s) - s))"
	done </tests/list
	echo "$MARK-DONE"
} >\$out
poweroff -f
EOF
chmod 755 "$r/init" "$r/bin/busybox" "$r"/tests/*.test
(cd "$r" && find . -print0 | LC_ALL=C sort -z | cpio --quiet --null -o -H newc -R 0:0) >"$WORK/initramfs.cpio" ||
	die "cpio failed"
mem=$(($(du -sm "$WORK/initramfs.cpio" | cut -f1) * 3 + 1024))

# ---------------------------------------------------------------- boot

log "booting $(basename "$VMLINUZ") (qemu TCG, -smp $SMP, -m ${mem}M, timeout ${GUEST_TIMEOUT}s)"
t=$(date +%s.%N)
rc=0
timeout --foreground -k 10 "$GUEST_TIMEOUT" qemu-system-x86_64 \
	-nodefaults -display none -no-reboot -accel tcg,thread=multi -cpu max -smp "$SMP" -m "${mem}M" \
	-kernel "$VMLINUZ" -initrd "$WORK/initramfs.cpio" \
	-append "console=ttyS0 panic=-1 loglevel=4" \
	-serial "file:$WORK/console.log" -serial "file:$WORK/report.log" \
	</dev/null >"$WORK/qemu.log" 2>&1 || rc=$?
log "guest ran $(elapsed "$t") s, qemu exit $rc"

# ---------------------------------------------------------------- report

tr -d '\r' <"$WORK/report.log" >"$WORK/report.txt"
grep -m1 "^$MARK-UNAME" "$WORK/report.txt" | sed "s/^$MARK-UNAME/guest:/" || true
if ! grep -q "^$MARK-DONE" "$WORK/report.txt"; then
	[ -s "$WORK/qemu.log" ] && { echo "--- qemu stderr:"; cat "$WORK/qemu.log"; }
	echo "--- last 60 lines of the report port:"
	tail -n 60 "$WORK/report.txt"
	echo "--- last 30 lines of the serial console:"
	tr -d '\r' <"$WORK/console.log" | tail -n 30
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		die "the guest did not finish within ${GUEST_TIMEOUT}s (GORTAPI_GUEST_TIMEOUT)"
	fi
	die "qemu exited ($rc) before every test binary had run"
fi
awk -v m="$MARK" '
	# Per package: one line of counts; for a failed one, the output of each
	# failed top-level test, or its last 40 lines when no test says FAIL
	# (a panic, a timeout).
	function flush() {
		if (name == "") return
		printf "%-4s %-28s %4d passed, %d failed, %d skipped  (%s s)\n", (rc == 0 ? "ok" : "FAIL"), dir, pass, fail, skip, secs
		printf "%s", sk
		if (rc != 0) {
			bad++
			if (fbuf != "") printf "%s", fbuf
			else for (i = (n > 40 ? n - 40 : 0); i < n; i++) print "    | " last[i % 40]
		}
		P += pass; F += fail; S += skip
		name = ""
	}
	$1 == m "-BEGIN" { name = $2; dir = $3; pass = fail = skip = n = 0; tbuf = fbuf = sk = ""; next }
	$1 == m "-END" { rc = $3; secs = $4; flush(); next }
	$1 == m "-EMUFAULT" { emu = emu "     " $2 ": SIGTRAP from the emulator, run again\n"; next }
	$1 == m "-DONE" { printf "%s", emu; printf "guest386: %d passed, %d failed, %d skipped\n", P, F, S; exit bad > 0 }
	name != "" {
		last[n++ % 40] = $0
		if ($1 == "===" && $2 == "RUN" && $3 !~ /\//) tbuf = ""
		tbuf = tbuf "    | " $0 "\n"
		if ($1 == "---" && $2 == "PASS:") pass++
		else if ($1 == "---" && $2 == "FAIL:") { fail++; if (/^--- FAIL/) fbuf = fbuf tbuf }
		else if ($1 == "---" && $2 == "SKIP:") skip++
		# What rttest skipped for want of a tool: its summary line.
		if (/tests? SKIPPED:/) sk = sk "     " $0 "\n"
	}
' "$WORK/report.txt" || die "linux/386 tests failed inside the guest (output above)"
log "linux/386 tests passed inside the guest (total $(elapsed "$T0") s)"
