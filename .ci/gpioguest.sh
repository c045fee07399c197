#!/usr/bin/env bash
# hal_gpio against the kernel's GPIO simulator (issue 42): boots the small
# kernel .ci/gpiokernel.sh builds (CONFIG_GPIO_SIM, which Debian's kernels
# lack) under qemu with a busybox initramfs, and runs rtapi/hal/comps' test
# binary inside, as root, with GORTAPI_REQUIRE_GPIO_SIM=1 and
# GORTAPI_REQUIRE_RT=1: its gpio-sim tests must pass, never skip.
#
# In the guest the tests create a gpio-sim chip through configfs (64 lines
# named GPIO0 to GPIO63), run a real-time HAL thread that writes outputs
# and reads inputs, check each output in gpio-sim's sysfs value, drive each
# input through its pull, fault the thread and check the safe state, and
# show a second consumer refused (TestHalGPIOOnGPIOSim); prove read and
# write allocation-free (TestHalGPIOHotPathDoesNotAllocate); toggle a line
# from a 25 µs thread and count its edges (TestHalGPIOToggle25us); run
# examples/halrun/testdata/gpio-stepper.hal (TestGPIOStepperHalOnGPIOSim);
# check hal_gpio.reset on virtual time (TestHalGPIOResetOnGPIOSim); show
# Stop, halrun's answer to SIGTERM, leaving the outputs safe
# (TestHalGPIOStopDrivesSafeValues); show unloadrt releasing the lines
# (TestHalGPIOUnloadrtReleasesTheLines); then
# BenchmarkHalGPIOSim times read and write for 1, 8 and 32 lines.
#
# qemu emulates the CPU (TCG; GORTAPI_QEMU_ACCEL=kvm to try KVM): the
# timings are an emulated machine's. Exit 0 = every test passed.
#
# Environment (all optional, besides those of .ci/kernels.sh and
# .ci/gpiokernel.sh):
#   GORTAPI_BOOT_TIMEOUT  seconds the guest may take (default 600)
#   GORTAPI_QEMU_SMP      guest CPUs (default 2)
#   GORTAPI_QEMU_ACCEL    tcg (default) or kvm
set -euo pipefail
shopt -s inherit_errexit

LANE=gpioguest
# shellcheck source=kernels.sh
source "$(dirname "${BASH_SOURCE[0]}")/kernels.sh"
BOOT_TIMEOUT=${GORTAPI_BOOT_TIMEOUT:-600}
SMP=${GORTAPI_QEMU_SMP:-2}
MARK=GORTAPI-GPIOGUEST-3d81c2
TESTS='^(TestHalGPIOOnGPIOSim|TestHalGPIOHotPathDoesNotAllocate|TestHalGPIOToggle25us|TestGPIOStepperHalOnGPIOSim|TestHalGPIOResetOnGPIOSim|TestHalGPIOStopDrivesSafeValues|TestHalGPIOUnloadrtReleasesTheLines)$'

ensure_tools
BZIMAGE=$(bash "$ROOT/.ci/gpiokernel.sh") || die "building the gpio-sim kernel failed (.ci/gpiokernel.sh)"
BUSYBOX=$(static_busybox)
log "kernel: $BZIMAGE"

# TCG, as the other qemu lanes: CI's machines are themselves virtual, and
# their /dev/kvm is nested (-cpu host fails on MSR 0x10a; without it the
# guest stopped on a KVM emulation failure and qemu hung, paused).
accel=${GORTAPI_QEMU_ACCEL:-tcg}
qemu_accel=(-accel "$accel")

t=$(date +%s.%N)
r=$WORK/initramfs
mkdir -p "$r"/bin "$r"/dev "$r"/proc "$r"/sys "$r"/tmp "$r"/src/rtapi/hal/comps "$r"/src/examples/halrun/testdata
cp "$BUSYBOX" "$r/bin/busybox"
# The test runs in its package's directory, as go test runs it, and
# reads the example .hal file from there.
cp "$ROOT/examples/halrun/testdata/gpio-stepper.hal" "$r/src/examples/halrun/testdata/"
(cd "$ROOT" && CGO_ENABLED=0 go test -c -trimpath -o "$r/comps.test" ./rtapi/hal/comps) ||
	die "CGO_ENABLED=0 go test -c ./rtapi/hal/comps failed"
cat >"$r/init" <<INIT
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin HOME=/tmp TMPDIR=/tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t configfs configfs /sys/kernel/config
mkdir -p /dev/shm && mount -t tmpfs -o mode=1777 shm /dev/shm
chmod 1777 /tmp
exec </dev/console >/dev/console 2>&1
out=/dev/ttyS1
[ -c \$out ] || out=/dev/console
{
	echo "$MARK-UNAME \$(uname -r) cpus \$(grep -c ^processor /proc/cpuinfo)"
	echo "$MARK-BEGIN"
	cd /src/rtapi/hal/comps
	GORTAPI_REQUIRE_GPIO_SIM=1 GORTAPI_REQUIRE_RT=1 /comps.test -test.run '$TESTS' -test.v -test.count=1 \\
		-test.bench '^BenchmarkHalGPIOSim\$' -test.benchtime=20000x -test.benchmem -test.timeout=8m 2>&1
	echo "$MARK-EXIT \$?"
} >\$out
reboot -f
INIT
chmod 755 "$r/init" "$r/bin/busybox" "$r/comps.test"
(cd "$r" && find . -print0 | LC_ALL=C sort -z | cpio --quiet --null -o -H newc -R 0:0) >"$WORK/initramfs.cpio" ||
	die "cpio failed"
log "comps.test + initramfs built in $(elapsed "$t") s"

log "booting (qemu $accel, -smp $SMP, timeout ${BOOT_TIMEOUT}s)"
t=$(date +%s.%N)
rc=0
timeout --foreground -k 10 "$BOOT_TIMEOUT" qemu-system-x86_64 \
	-nodefaults -display none -no-reboot "${qemu_accel[@]}" -smp "$SMP" -m 512M \
	-kernel "$BZIMAGE" -initrd "$WORK/initramfs.cpio" \
	-append "console=ttyS0 panic=-1 loglevel=4" \
	-serial "file:$WORK/console.log" -serial "file:$WORK/report.log" \
	</dev/null >"$WORK/qemu.log" 2>&1 || rc=$?
log "guest ran $(elapsed "$t") s, qemu exit $rc"

tr -d '\r' <"$WORK/report.log" >"$WORK/report.txt"
grep -m1 "^$MARK-UNAME" "$WORK/report.txt" | sed "s/^$MARK-UNAME/guest: qemu $accel, kernel/" || true
if ! grep -q "^$MARK-EXIT" "$WORK/report.txt"; then
	if [ -s "$WORK/qemu.log" ]; then echo "--- qemu stderr:"; cat "$WORK/qemu.log"; fi
	echo "--- report port:"
	tail -n 60 "$WORK/report.txt"
	echo "--- last 40 lines of the serial console:"
	tr -d '\r' <"$WORK/console.log" | tail -n 40
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		die "the guest did not finish within ${BOOT_TIMEOUT}s (GORTAPI_BOOT_TIMEOUT)"
	fi
	die "the guest ended without a complete report (qemu exit $rc)"
fi
sed -n "/^$MARK-BEGIN/,/^$MARK-EXIT/p" "$WORK/report.txt" | sed '1d;$d' >"$WORK/tests.txt"
grep -E '^(--- |\s+hal_gpio_sim_linux_test.go|Benchmark|PASS|FAIL|ok|panic)' "$WORK/tests.txt" || true
status=$(awk -v m="$MARK-EXIT" '$1 == m { print $2 }' "$WORK/report.txt")
failed=0
for name in TestHalGPIOOnGPIOSim TestHalGPIOHotPathDoesNotAllocate TestHalGPIOToggle25us TestGPIOStepperHalOnGPIOSim TestHalGPIOResetOnGPIOSim TestHalGPIOStopDrivesSafeValues TestHalGPIOUnloadrtReleasesTheLines; do
	if ! grep -q -- "--- PASS: $name " "$WORK/tests.txt"; then
		echo "FAIL: $name did not pass (a skip counts as a failure here)"
		failed=1
	fi
done
if ! grep -q '^BenchmarkHalGPIOSim/write-32' "$WORK/tests.txt"; then
	echo "FAIL: BenchmarkHalGPIOSim did not run"
	failed=1
fi
if [ "$status" != 0 ] || [ "$failed" != 0 ]; then
	echo "--- the test binary's whole output (exit $status):"
	cat "$WORK/tests.txt"
	die "hal_gpio on gpio-sim failed"
fi
log "hal_gpio on gpio-sim passed (qemu $accel; total $(elapsed "$T0") s)"
