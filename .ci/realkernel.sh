#!/usr/bin/env bash
# Real-kernel lane (issue 2): fixtures can lie, so boot real Debian kernels
# under qemu (software emulation, TCG; no KVM needed) with a static rtcheck as
# /init, and assert what it reports from inside:
#
#   rt   linux-image-rt-amd64 (PREEMPT_RT)  kind == "preempt-rt", SCHED_FIFO settable
#   std  linux-image-amd64 (standard)       kind != "preempt-rt", SCHED_FIFO settable
#
# On both, init (root, every capability) then runs rtapi's own test binary,
# `rtapi.test -test.run '^TestRTPrioLimit$'`: it gives a child RLIMIT_RTPRIO 50
# (hard and soft: the kernel's default hard limit is 0, and raising it needs
# CAP_SYS_RESOURCE, which CI's root lacks), runs it as uid 65534, and the child
# opens rtapi (auto-detection, then posix+VanillaFIFO) and starts a task. The
# test must PASS, not skip: default task at SCHED_FIFO 49 per sched_getattr,
# watchdog at 50, the flavor's why naming the limit. The same run has
# TestResyncForgetsAFiredRelease: these 6.1 kernels deliver a POSIX timer's
# signal queued before a re-arm, which later kernels drop (issue 21).
#
# Exit 0 = every kernel passed. Installs qemu-system-x86 and cpio with apt when
# they are missing (needs root then); fetches kernels (and busybox-static when
# it is not installed) with `apt-get download` + `dpkg -x` into a cache, so a
# rerun needs no network. Writes nothing inside the repository.
#
# Environment (all optional):
#   GORTAPI_KERNEL_CACHE   cache dir (default ${XDG_CACHE_HOME:-$HOME/.cache}/gortapi/kernels)
#   GORTAPI_KERNELS        which kernels to boot, default "rt std"
#   GORTAPI_BOOT_TIMEOUT   seconds one boot may take before it counts as hung (default 300)
#   GORTAPI_QEMU_SMP       guest CPUs (default 2, as the machines this targets; both kernels boot in parallel)
#   GORTAPI_KEEP_WORK=1    keep the scratch dir (serial logs, initramfs) even on success
#   RTCHECK_BIN            use this static rtcheck instead of building ./examples/rtcheck
#   RTAPI_TEST_BIN         use this static rtapi test binary instead of building it
#                          (CGO_ENABLED=0 go test -c ./rtapi)
set -euo pipefail
shopt -s inherit_errexit

LANE=realkernel
# shellcheck source=kernels.sh
source "$(dirname "${BASH_SOURCE[0]}")/kernels.sh"
KERNELS=${GORTAPI_KERNELS:-rt std}
BOOT_TIMEOUT=${GORTAPI_BOOT_TIMEOUT:-300}
SMP=${GORTAPI_QEMU_SMP:-2}
MARK=GORTAPI-REALKERNEL-7f3a9c
NEED_GO=1
{ [ -n "${RTCHECK_BIN:-}" ] && [ -n "${RTAPI_TEST_BIN:-}" ]; } && NEED_GO=0

# ---------------------------------------------------------------- initramfs

build_rtcheck() {
	if [ -n "${RTCHECK_BIN:-}" ]; then
		cp "$RTCHECK_BIN" "$WORK/rtcheck"
		return
	fi
	(cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -o "$WORK/rtcheck" ./examples/rtcheck) ||
		die "CGO_ENABLED=0 go build ./examples/rtcheck failed"
}

build_rtapi_test() {
	if [ -n "${RTAPI_TEST_BIN:-}" ]; then
		cp "$RTAPI_TEST_BIN" "$WORK/rtapi.test"
		return
	fi
	(cd "$ROOT" && CGO_ENABLED=0 go test -c -trimpath -o "$WORK/rtapi.test" ./rtapi) ||
		die "CGO_ENABLED=0 go test -c ./rtapi failed"
}

build_spinguard_test() {
	(cd "$ROOT" && CGO_ENABLED=0 go test -c -trimpath -o "$WORK/spinguard.test" ./internal/guard) ||
		die "CGO_ENABLED=0 go test -c ./internal/guard failed"
}

# The report goes to the second serial port (ttyS1) so that kernel messages on
# the console (ttyS0) can never interleave with the JSON.
make_initramfs() {
	local busybox=$1 r=$WORK/initramfs
	mkdir -p "$r"/bin "$r"/dev "$r"/proc "$r"/sys "$r"/tmp
	cp "$busybox" "$r/bin/busybox"
	cp "$WORK/rtcheck" "$r/rtcheck"
	cp "$WORK/rtapi.test" "$r/rtapi.test"
	cp "$WORK/spinguard.test" "$r/spinguard.test"
	cat >"$r/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/shm && mount -t tmpfs -o mode=1777 shm /dev/shm
chmod 1777 /tmp
exec </dev/console >/dev/console 2>&1
[ -d /sys/kernel/debug ] && mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
out=/dev/ttyS1
[ -c \$out ] || out=/dev/console
{
	echo "$MARK-VERSION-BEGIN"
	cat /proc/version
	echo "$MARK-VERSION-END"
	echo "$MARK-JSON-BEGIN"
	/rtcheck -json 2>/tmp/rtcheck.err
	rc=\$?
	echo "$MARK-JSON-END"
	echo "$MARK-STDERR-BEGIN"
	cat /tmp/rtcheck.err
	echo "$MARK-STDERR-END"
	echo "$MARK-RTPRIO-BEGIN"
	GORTAPI_REQUIRE_RT=1 /rtapi.test -test.run '^(TestRTPrioLimit|TestResyncForgetsAFiredRelease)\$' -test.v -test.count=1 2>&1
	rtprio_rc=\$?
	echo "$MARK-RTPRIO-END"
	echo "$MARK-RTPRIO-EXIT \$rtprio_rc"
	# RT throttling off, as on many dedicated real-time machines: a
	# livelocked SCHED_FIFO thread now never lets the CPU go, and the
	# guest hangs until the lane's boot timeout fails it. With it off,
	# the task set and the runtime-spin reproduction must still finish.
	echo "$MARK-LIVELOCK-BEGIN"
	echo -1 >/proc/sys/kernel/sched_rt_runtime_us
	echo "sched_rt_runtime_us=\$(cat /proc/sys/kernel/sched_rt_runtime_us)"
	GORTAPI_REQUIRE_RT=1 /rtapi.test -test.run '^(TestTaskSetNeverStalls|TestSpinGuardEndsASpinOverAnOrdinaryThread)\$' -test.v -test.count=1 2>&1
	livelock_rc=\$?
	# The guard on the spinner's CPU, where its own wake-ups preempt it.
	GORTAPI_REQUIRE_RT=1 /spinguard.test -test.run '^(TestGuardBreaksASpinOverASchedOtherHolder|TestGuardBreaksASpinOnItsOwnCPU)\$' -test.v -test.count=1 2>&1
	[ \$? = 0 ] || livelock_rc=1
	echo 950000 >/proc/sys/kernel/sched_rt_runtime_us
	echo "$MARK-LIVELOCK-END"
	echo "$MARK-LIVELOCK-EXIT \$livelock_rc"
	echo "$MARK-EXIT \$rc"
} >\$out
echo "$MARK-DONE"
poweroff -f
EOF
	chmod 755 "$r/init" "$r/rtcheck" "$r/rtapi.test" "$r/spinguard.test" "$r/bin/busybox"
	(cd "$r" && find . -print0 | LC_ALL=C sort -z | cpio --quiet --null -o -H newc -R 0:0) >"$WORK/initramfs.cpio" ||
		die "cpio failed"
}

# ---------------------------------------------------------------- boot

# kernel_initramfs flavor vmlinuz: the common initramfs plus, as a real Debian
# install has it, /boot/config-<release> from the kernel package, so rtcheck
# can read the kernel config (Debian kernels have no /proc/config.gz). The
# kernel unpacks concatenated cpio archives in order.
kernel_initramfs() {
	local flavor=$1 vmlinuz=$2 d=$WORK/$1 release config
	release=$(basename "$vmlinuz")
	release=${release#vmlinuz-}
	config=$(dirname "$vmlinuz")/config-$release
	mkdir -p "$d/extra/boot"
	if [ -f "$config" ]; then
		cp "$config" "$d/extra/boot/"
	else
		log "$flavor: no $config in the package; rtcheck will not see a kernel config"
	fi
	(cd "$d/extra" && find . -print0 | LC_ALL=C sort -z | cpio --quiet --null -o -H newc -R 0:0) >"$d/extra.cpio" ||
		die "cpio failed"
	cat "$WORK/initramfs.cpio" "$d/extra.cpio" >"$d/initramfs.cpio"
}

boot() { # flavor vmlinuz -> writes $WORK/$flavor/{console,report,qemu}.log and boot.rc, boot.secs
	local flavor=$1 vmlinuz=$2 d=$WORK/$1 t rc=0
	t=$(date +%s.%N)
	# --foreground keeps qemu in our process group, so whoever stops this
	# script's group (the Go test on its deadline, ^C) stops the guests too.
	timeout --foreground -k 10 "$BOOT_TIMEOUT" qemu-system-x86_64 \
		-nodefaults -display none -no-reboot -accel tcg -smp "$SMP" -m 512M \
		-kernel "$vmlinuz" -initrd "$d/initramfs.cpio" \
		-append "console=ttyS0 panic=-1 loglevel=6" \
		-serial "file:$d/console.log" -serial "file:$d/report.log" \
		</dev/null >"$d/qemu.log" 2>&1 || rc=$?
	echo "$rc" >"$d/boot.rc"
	elapsed "$t" >"$d/boot.secs"
}

check_kernel() { # flavor vmlinuz -> 0 when the kernel passed
	local flavor=$1 vmlinuz=$2 d=$WORK/$1 src rc
	rc=$(cat "$d/boot.rc")
	echo
	echo "=== $flavor kernel: $(basename "$(dirname "$(dirname "$vmlinuz")")") — boot $(cat "$d/boot.secs") s, qemu exit $rc"
	src=$d/report.log
	grep -q "$MARK-EXIT" "$src" 2>/dev/null || src=$d/console.log
	if ! grep -q "$MARK-EXIT" "$src" 2>/dev/null; then
		if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
			echo "  FAIL: the boot hung: no report after ${BOOT_TIMEOUT}s (GORTAPI_BOOT_TIMEOUT)"
		else
			echo "  FAIL: qemu exited ($rc) without a complete rtcheck report"
		fi
		[ -s "$d/qemu.log" ] && { echo "  --- qemu stderr:"; sed 's/^/  | /' "$d/qemu.log"; }
		echo "  --- last 40 lines of the serial console:"
		tr -d '\r' <"$d/console.log" 2>/dev/null | tail -n 40 | sed 's/^/  | /'
		[ -s "$d/report.log" ] && { echo "  --- report port:"; tr -d '\r' <"$d/report.log" | tail -n 40 | sed 's/^/  | /'; }
		return 1
	fi
	section "$src" "$MARK-VERSION-BEGIN" "$MARK-VERSION-END" >"$d/version.txt"
	section "$src" "$MARK-JSON-BEGIN" "$MARK-JSON-END" >"$d/report.json"
	section "$src" "$MARK-STDERR-BEGIN" "$MARK-STDERR-END" >"$d/stderr.txt"
	section "$src" "$MARK-RTPRIO-BEGIN" "$MARK-RTPRIO-END" >"$d/rtprio.txt"
	section "$src" "$MARK-LIVELOCK-BEGIN" "$MARK-LIVELOCK-END" >"$d/livelock.txt"
	local livelock_rc
	livelock_rc=$(exit_status "$src" "$MARK-LIVELOCK-EXIT")
	echo "  task set and runtime spin with sched_rt_runtime_us=-1: exit $livelock_rc"
	grep -E '^(--- |sched_rt_runtime_us=|\s+taskset_test.go)' "$d/livelock.txt" | sed 's/^/  | /'
	if [ "$livelock_rc" != 0 ] || ! grep -q -- '--- PASS: TestTaskSetNeverStalls' "$d/livelock.txt" ||
		! grep -q -- '--- PASS: TestSpinGuardEndsASpinOverAnOrdinaryThread' "$d/livelock.txt" ||
		! grep -q -- '--- PASS: TestGuardBreaksASpinOnItsOwnCPU' "$d/livelock.txt"; then
		echo "  FAIL: with RT throttling off, the task set or the spin reproduction did not pass:"
		sed 's/^/  | /' "$d/livelock.txt"
		return 1
	fi
	echo "  rtcheck exit status: $(exit_status "$src" "$MARK-EXIT")"
	[ -s "$d/stderr.txt" ] && { echo "  rtcheck stderr:"; sed 's/^/  | /' "$d/stderr.txt"; }
	"$WORK/assert" -want "$flavor" -version "$d/version.txt" -rtprio "$d/rtprio.txt" -rtprio-exit "$(exit_status "$src" "$MARK-RTPRIO-EXIT")" "$d/report.json" || {
		echo "  --- report JSON:"
		sed 's/^/  | /' "$d/report.json"
		echo "  --- rtapi.test -test.run '^TestRTPrioLimit\$' inside the guest:"
		sed 's/^/  | /' "$d/rtprio.txt"
		return 1
	}
	echo "  PASS"
}

# ---------------------------------------------------------------- main

ensure_tools
log "cache: $CACHE"
# Drop downloads a killed run left half done, and kernels no run used for 30
# days (Debian's security updates bump the kernel ABI name every few weeks).
if [ -d "$CACHE" ]; then
	find "$CACHE" -mindepth 1 -maxdepth 1 -name '.fetch.*' -mmin +60 -exec rm -rf {} + 2>/dev/null || true
	find "$CACHE" -mindepth 1 -maxdepth 1 ! -name '.*' -mtime +30 -exec rm -rf {} + 2>/dev/null || true
fi
# No package lists at all (a fresh container): fetch them once, here, rather
# than in each of the subshells below.
[ -n "$(candidate linux-image-amd64)" ] || apt_update

t=$(date +%s.%N)
# The kernels download in parallel: two connections to the mirror beat one.
declare -A VMLINUZ
declare -A FETCH_PID
for k in $KERNELS; do
	fetch_kernel "$k" >"$WORK/vmlinuz.$k" &
	FETCH_PID[$k]=$!
done
for k in $KERNELS; do
	wait "${FETCH_PID[$k]}" || die "fetching the $k kernel failed (see above)"
	VMLINUZ[$k]=$(cat "$WORK/vmlinuz.$k")
	log "$k kernel: ${VMLINUZ[$k]}"
done
BUSYBOX=$(static_busybox)
log "busybox: $BUSYBOX"
log "fetch done in $(elapsed "$t") s"

t=$(date +%s.%N)
build_rtcheck
build_rtapi_test
build_spinguard_test
(cd "$ROOT/.ci/realkernel" && go build -o "$WORK/assert" assert.go) || die "building .ci/realkernel/assert.go failed"
make_initramfs "$BUSYBOX"
for k in $KERNELS; do
	kernel_initramfs "$k" "${VMLINUZ[$k]}"
done
log "rtcheck, rtapi.test + initramfs built in $(elapsed "$t") s ($(du -k "$WORK/initramfs.cpio" | cut -f1) KiB)"

t=$(date +%s.%N)
log "booting $KERNELS in parallel (qemu TCG, -smp $SMP, timeout ${BOOT_TIMEOUT}s each)"
pids=()
for k in $KERNELS; do
	boot "$k" "${VMLINUZ[$k]}" &
	pids+=($!)
done
wait "${pids[@]}" || true
log "boots done in $(elapsed "$t") s"

failed=()
for k in $KERNELS; do
	check_kernel "$k" "${VMLINUZ[$k]}" || failed+=("$k")
done
echo
if [ ${#failed[@]} -gt 0 ]; then
	die "real-kernel lane: ${failed[*]} failed (total $(elapsed "$T0") s)"
fi
log "real-kernel lane passed: $KERNELS (total $(elapsed "$T0") s)"
