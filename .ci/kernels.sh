# Shared by the qemu lanes (.ci/realkernel.sh, .ci/guest386.sh): logging,
# a scratch dir, Debian kernel and busybox packages fetched with apt-get
# download + dpkg -x into a cache, so a rerun needs no network.
#
# The sourcing script sets LANE (its name in log lines) before sourcing;
# ROOT, CACHE, WORK, log, die, elapsed, ensure_tools, fetch_kernel,
# static_busybox, section and exit_status are then defined.
# Environment: GORTAPI_KERNEL_CACHE (cache dir, default
# ${XDG_CACHE_HOME:-$HOME/.cache}/gortapi/kernels), GORTAPI_KEEP_WORK=1
# (keep the scratch dir even on success).

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${GORTAPI_KERNEL_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/gortapi/kernels}

T0=$(date +%s.%N)
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
log() { printf '[%s +%ss] %s\n' "$LANE" "$(elapsed "$T0")" "$*" >&2; }
die() { printf '[%s +%ss] FAIL: %s\n' "$LANE" "$(elapsed "$T0")" "$*" >&2; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/gortapi-$LANE.XXXXXX")
cleanup() {
	local rc=$?
	if [ "$rc" -ne 0 ] || [ "${GORTAPI_KEEP_WORK:-0}" = 1 ]; then
		echo "$LANE: scratch dir kept: $WORK" >&2
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# ---------------------------------------------------------------- apt helpers

APT_OPTS=(-q -o DPkg::Lock::Timeout=600)
[ "$(id -u)" = 0 ] && APT_OPTS+=(-o APT::Sandbox::User=root)

APT_UPDATED=0
apt_update() {
	[ "$APT_UPDATED" = 1 ] && return 0
	APT_UPDATED=1
	[ "$(id -u)" = 0 ] || { log "not root: cannot run apt-get update, using the package lists as they are"; return 0; }
	log "apt-get update"
	apt-get "${APT_OPTS[@]}" update >"$WORK/apt-update.log" 2>&1 ||
		{ tail -n 20 "$WORK/apt-update.log" >&2; die "apt-get update failed"; }
}

ensure_tools() {
	command -v apt-get >/dev/null || {
		command -v qemu-system-x86_64 >/dev/null && command -v cpio >/dev/null && command -v dpkg >/dev/null ||
			die "needs a Debian-like system (apt-get, dpkg) or qemu-system-x86_64, cpio and dpkg already installed"
	}
	local need=()
	command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
	command -v cpio >/dev/null || need+=(cpio)
	[ "${NEED_GO:-1}" = 0 ] || command -v go >/dev/null || die "go is not on PATH (needed to build what the guest runs)"
	if [ ${#need[@]} -gt 0 ]; then
		[ "$(id -u)" = 0 ] || die "missing ${need[*]}; run as root or install them: sudo apt-get install -y ${need[*]}"
		apt_update
		log "apt-get install ${need[*]}"
		DEBIAN_FRONTEND=noninteractive apt-get "${APT_OPTS[@]}" install -y --no-install-recommends "${need[@]}" \
			>"$WORK/apt-install.log" 2>&1 || { tail -n 20 "$WORK/apt-install.log" >&2; die "apt-get install ${need[*]} failed"; }
	fi
	command -v qemu-system-x86_64 >/dev/null ||
		die "qemu-system-x86_64 is still not on PATH after installing qemu-system-x86 (PATH=$PATH)"
	command -v cpio >/dev/null || die "cpio is still not on PATH after installing it"
}

candidate() { # $1 package -> candidate version, or nothing
	apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ { if ($2 != "(none)") print $2; exit }'
}

# fetch PKG -> prints the directory PKG's .deb is unpacked in (cached by version).
# The cache entry is complete only once it is renamed into place.
fetch() {
	local pkg=$1 ver dir tmp
	ver=$(candidate "$pkg")
	[ -n "$ver" ] || { apt_update; ver=$(candidate "$pkg"); }
	[ -n "$ver" ] || die "apt has no candidate for $pkg (is Debian bookworm main in the apt sources?)"
	dir=$CACHE/${pkg}_${ver}
	if [ -d "$dir" ]; then
		touch "$dir" # marks it used; entries unused for 30 days are pruned
		echo "$dir"
		return
	fi
	mkdir -p "$CACHE"
	tmp=$(mktemp -d "$CACHE/.fetch.XXXXXX")
	local t=$(date +%s.%N) t_dl
	if ! (cd "$tmp" && apt-get "${APT_OPTS[@]}" download "$pkg=$ver") >"$tmp/download.log" 2>&1; then
		rm -rf "$tmp"
		return 1
	fi
	t_dl=$(elapsed "$t")
	t=$(date +%s.%N)
	dpkg -x "$tmp"/*.deb "$tmp/root" || { rm -rf "$tmp"; die "dpkg -x of $pkg $ver failed"; }
	# A kernel package is 400 MB unpacked, nearly all modules the lane does
	# not load: keep boot/ (vmlinuz, config, System.map), 15 MB.
	if [[ $pkg == linux-image-* ]] && [ -d "$tmp/root/boot" ]; then
		mkdir "$tmp/kept" && mv "$tmp/root/boot" "$tmp/kept/" && rm -rf "$tmp/root" && mv "$tmp/kept" "$tmp/root"
	fi
	mv -T "$tmp/root" "$dir" 2>/dev/null || [ -d "$dir" ] || { rm -rf "$tmp"; die "cannot store $pkg in $dir"; }
	rm -rf "$tmp"
	log "$pkg $ver: apt-get download ${t_dl} s, dpkg -x $(elapsed "$t") s"
	echo "$dir"
}

# fetch_retry PKG: a package list that has gone stale (the mirror dropped that
# version) is refreshed once; with no network, the newest cached copy serves.
fetch_retry() {
	local pkg=$1 dir
	dir=$(fetch "$pkg") && { echo "$dir"; return; }
	if [ "$APT_UPDATED" = 0 ]; then
		apt_update
		dir=$(fetch "$pkg") && { echo "$dir"; return; }
	fi
	dir=$(ls -d "$CACHE/${pkg}_"* 2>/dev/null | sort -V | tail -n 1)
	[ -n "$dir" ] || die "apt-get download $pkg failed and nothing is cached in $CACHE"
	log "apt-get download $pkg failed; using cached $(basename "$dir")"
	echo "$dir"
}

# kernel_pkg META -> the linux-image-6.x package the meta package depends on.
kernel_pkg() {
	local meta=$1 pkg
	pkg=$(apt-cache depends "$meta" 2>/dev/null | awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
	if [ -z "$pkg" ]; then
		apt_update
		pkg=$(apt-cache depends "$meta" 2>/dev/null | awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
	fi
	[ -n "$pkg" ] || die "cannot resolve $meta to a linux-image-6.x package (apt-cache depends $meta)"
	echo "$pkg"
}

fetch_kernel() { # flavor -> path of vmlinuz
	local meta dir vmlinuz
	case $1 in
	rt) meta=linux-image-rt-amd64 ;;
	std) meta=linux-image-amd64 ;;
	*) die "unknown kernel '$1' in GORTAPI_KERNELS (want rt and/or std)" ;;
	esac
	dir=$(fetch_retry "$(kernel_pkg "$meta")")
	vmlinuz=$(ls "$dir"/boot/vmlinuz-* 2>/dev/null | head -n 1)
	[ -n "$vmlinuz" ] || die "no boot/vmlinuz-* in $dir"
	echo "$vmlinuz"
}

static_busybox() {
	if [ "$(dpkg-query -W -f='${Status}' busybox-static 2>/dev/null)" = "install ok installed" ] && [ -x /bin/busybox ]; then
		echo /bin/busybox
		return
	fi
	local dir
	dir=$(fetch_retry busybox-static)
	[ -x "$dir/bin/busybox" ] || die "no bin/busybox in $dir"
	echo "$dir/bin/busybox"
}


section() { # file begin end -> the lines between the markers, without CRs
	tr -d '\r' <"$1" | awk -v b="$2" -v e="$3" '$0 == e { exit } f { print } $0 == b { f = 1 }'
}

exit_status() { # file marker -> N from the line "marker N", or nothing
	tr -d '\r' <"$1" | awk -v m="$2" '$1 == m { print $2 }'
}
