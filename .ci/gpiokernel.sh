#!/usr/bin/env bash
# A small x86-64 kernel with the GPIO character device and gpio-sim, for the
# hal_gpio guest lane (.ci/gpioguest.sh). Debian's kernels do not enable
# CONFIG_GPIO_SIM, so this builds one from Debian's linux-source-6.12
# package: tinyconfig plus what the guest needs (below, FRAGMENT).
#
# Prints the path of the bzImage on stdout; everything else goes to stderr.
# The build is cached under $GORTAPI_GPIO_KERNEL_CACHE (default
# /var/cache/gortapi/gpiokernel, or ~/.cache/gortapi/gpiokernel where that
# is not writable), keyed by a hash of the source package's
# version, the compiler's version and FRAGMENT: a rerun on the same machine
# costs nothing, and a new linux-source-6.12 or fragment builds again.
# Entries unused for 60 days are pruned. Concurrent runs wait on a lock, so
# the kernel builds once.
#
# The build runs at nice 19 with make -j2: it competes with everything else
# on CI's 2-core machine, so it yields. Its wall time goes to the cache
# entry (build.secs) and to stderr.
#
# Needs root on a machine without the build tools (apt-get install
# linux-source-6.12 gcc make flex bison bc libelf-dev xz-utils).
set -euo pipefail
shopt -s inherit_errexit

LANE=gpiokernel
CACHE=${GORTAPI_GPIO_KERNEL_CACHE:-/var/cache/gortapi/gpiokernel}
# Not root: /var/cache is not ours to write; the user's cache serves.
if [ -z "${GORTAPI_GPIO_KERNEL_CACHE:-}" ] && ! { mkdir -p "$CACHE" 2>/dev/null && [ -w "$CACHE" ]; }; then
	CACHE=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/gortapi/gpiokernel
fi
SRC_PKG=linux-source-6.12
TARBALL=/usr/src/linux-source-6.12.tar.xz

T0=$(date +%s.%N)
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
log() { printf '[%s +%ss] %s\n' "$LANE" "$(elapsed "$T0")" "$*" >&2; }
die() { printf '[%s +%ss] FAIL: %s\n' "$LANE" "$(elapsed "$T0")" "$*" >&2; exit 1; }

# What the guest needs on top of tinyconfig: a 64-bit kernel that boots an
# initramfs with a console on the first serial port and runs static Go
# binaries (futex, epoll, eventfd, POSIX timers, flock, sysctl, tmpfs for
# /dev/shm), and
# gpiolib with the character device and the simulator (configured through
# configfs, read back through sysfs).
FRAGMENT='CONFIG_64BIT=y
CONFIG_SMP=y
CONFIG_NR_CPUS=4
CONFIG_PREEMPT=y
CONFIG_HIGH_RES_TIMERS=y
CONFIG_HPET_TIMER=y
CONFIG_NO_HZ_IDLE=y
CONFIG_BLK_DEV_INITRD=y
CONFIG_PRINTK=y
CONFIG_EARLY_PRINTK=y
CONFIG_TTY=y
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y
CONFIG_PROC_FS=y
CONFIG_PROC_SYSCTL=y
CONFIG_SYSFS=y
CONFIG_DEVTMPFS=y
CONFIG_CONFIGFS_FS=y
CONFIG_SHMEM=y
CONFIG_TMPFS=y
CONFIG_BINFMT_ELF=y
CONFIG_BINFMT_SCRIPT=y
CONFIG_MULTIUSER=y
CONFIG_FUTEX=y
CONFIG_FILE_LOCKING=y
CONFIG_EPOLL=y
CONFIG_EVENTFD=y
CONFIG_SIGNALFD=y
CONFIG_TIMERFD=y
CONFIG_POSIX_TIMERS=y
CONFIG_ADVISE_SYSCALLS=y
CONFIG_SYSVIPC=y
CONFIG_GPIOLIB=y
CONFIG_GPIO_CDEV=y
CONFIG_GPIO_SIM=y'

need=()
[ -f "$TARBALL" ] || need+=("$SRC_PKG")
for t in gcc make flex bison bc xz; do
	command -v "$t" >/dev/null || need+=("$t")
done
[ -f /usr/include/libelf.h ] || need+=(libelf-dev) # objtool
if [ ${#need[@]} -gt 0 ]; then
	need=("${need[@]/#xz/xz-utils}")
	[ "$(id -u)" = 0 ] || die "missing ${need[*]}; run as root or: sudo apt-get install -y ${need[*]}"
	log "apt-get install ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get -q -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${need[@]}" >&2 ||
		{ apt-get -q -o DPkg::Lock::Timeout=600 update >&2 &&
			apt-get -q -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${need[@]}" >&2; } ||
		die "apt-get install ${need[*]} failed"
fi

src_ver=$(dpkg-query -W -f='${Version}' "$SRC_PKG" 2>/dev/null || stat -c %Y "$TARBALL")
key=$({ echo "$src_ver"; gcc --version | head -n 1; echo "$FRAGMENT"; } | sha256sum | cut -c1-16)
entry=$CACHE/$src_ver-$key
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock" || die "cannot write $CACHE (set GORTAPI_GPIO_KERNEL_CACHE)"
flock 9
find "$CACHE" -mindepth 1 -maxdepth 1 -name '.build.*' -mmin +180 -exec rm -rf {} + 2>/dev/null || true
find "$CACHE" -mindepth 1 -maxdepth 1 ! -name '.*' -mtime +60 -exec rm -rf {} + 2>/dev/null || true
if [ -f "$entry/bzImage" ]; then
	touch "$entry"
	log "cached: $entry (built in $(cat "$entry/build.secs" 2>/dev/null || echo '?') s)"
	echo "$entry/bzImage"
	exit 0
fi

work=$(mktemp -d "$CACHE/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT
log "building $SRC_PKG $src_ver (key $key) in $work: nice -n 19, make -j2"
t=$(date +%s.%N)
nice -n 19 tar -C "$work" -xJf "$TARBALL" || die "tar -xJf $TARBALL failed"
k=$(ls -d "$work"/linux-source-* | head -n 1)
log "unpacked in $(elapsed "$t") s"
printf '%s\n' "$FRAGMENT" >"$work/fragment.config"
if ! (
	cd "$k"
	nice -n 19 make -s ARCH=x86_64 tinyconfig
	./scripts/kconfig/merge_config.sh -m .config "$work/fragment.config"
	nice -n 19 make -s ARCH=x86_64 olddefconfig
) >"$work/config.log" 2>&1; then
	tail -n 40 "$work/config.log" >&2
	die "configuring the kernel failed"
fi
# A dependency the fragment forgot would drop an option silently.
missing=$(printf '%s\n' "$FRAGMENT" | while IFS= read -r line; do
	grep -qxF "$line" "$k/.config" || echo "$line"
done)
[ -z "$missing" ] || die "the kernel config lacks, after olddefconfig: $(echo $missing)"
tb=$(date +%s.%N)
if ! (cd "$k" && nice -n 19 make -s -j2 ARCH=x86_64 bzImage >"$work/make.log" 2>&1); then
	tail -n 40 "$work/make.log" >&2
	die "make bzImage failed"
fi
secs=$(elapsed "$tb")
mkdir "$work/entry"
cp "$k/arch/x86/boot/bzImage" "$work/entry/bzImage"
cp "$k/.config" "$work/entry/config"
echo "$secs" >"$work/entry/build.secs"
echo "$(elapsed "$t")" >"$work/entry/total.secs"
mv -T "$work/entry" "$entry"
log "built in $secs s (make bzImage, nice 19, -j2; $(elapsed "$t") s with unpacking and config, load average $(cut -d' ' -f1-3 /proc/loadavg)): $entry"
echo "$entry/bzImage"
