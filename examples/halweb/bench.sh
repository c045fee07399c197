#!/bin/sh
# bench.sh measures what halweb costs a host's threads (issue 43): a
# halhost (base and servo threads) runs D seconds with nothing attached,
# then D seconds with halweb serving headless Chromium a live scope of
# three signals sampled on the base thread (auto mode, 4000 samples) and
# the tree, alternating the two, round after round. Each run's thread
# wake-up latency (max and p99.9, halhost's own report at its end) is
# printed, then the median of each over the rounds and the ratios
# browser / none. The goal is ratios within the rounds' spread (<= 1.1).
#
#	sudo examples/halweb/bench.sh [-d SECONDS] [-rounds N] [-base PERIOD] [-client browser|ws] [-- HALHOST_FLAGS...]
#	examples/halweb/bench.sh -d 2 -rounds 1     # smoke run
#
# Run it on an idle machine, as root for SCHED_FIFO (halhost prints its
# scheduling). It needs chromium (apt-get install chromium) and curl.
# -client ws reads the same WebSocket stream with a small Node.js client
# (npm's ws package, installed into the scratch directory) instead of
# Chromium: halweb's own cost, without a browser rendering on the host's
# CPUs (the browser of the issue's case runs on another machine).
set -eu
D=10
ROUNDS=5
BASE=25us
CLIENT=browser
while [ $# -gt 0 ]; do
	case $1 in
	-client) CLIENT=$2; shift 2 ;;
	-d) D=$2; shift 2 ;;
	-rounds) ROUNDS=$2; shift 2 ;;
	-base) BASE=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "usage: bench.sh [-d SECONDS] [-rounds N] [-base PERIOD] [-client browser|ws] [-- HALHOST_FLAGS...]" >&2; exit 2 ;;
	esac
done
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
pids=""
cleanup() {
	for p in $pids; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true; done
	for p in $pids; do wait "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT INT TERM
case $CLIENT in
browser) command -v chromium >/dev/null || { echo "bench.sh: needs chromium (apt-get install chromium)" >&2; exit 1; } ;;
ws) command -v node >/dev/null && command -v npm >/dev/null || { echo "bench.sh: -client ws needs node and npm" >&2; exit 1; } ;;
*) echo "bench.sh: -client browser or ws" >&2; exit 2 ;;
esac
command -v curl >/dev/null || { echo "bench.sh: needs curl" >&2; exit 1; }
(cd "$root" && go build -o "$work/halhost" ./examples/halhost && go build -o "$work/halweb" ./examples/halweb)
if [ "$CLIENT" = ws ]; then
	npm install --silent --prefix "$work" ws@8 >/dev/null
	cat >"$work/client.js" <<'JS'
// The page's traffic without a page: a watch list, every capture read.
const WebSocket = require(process.argv[2] + "/node_modules/ws");
const ws = new WebSocket(process.argv[3], { headers: { Authorization: "Bearer " + process.argv[4] } });
let n = 0;
ws.on("open", () => ws.send(JSON.stringify({ type: "watch", names: ["pos-cmd", "pos-fb", "torque"] })));
ws.on("message", () => { n++; });
ws.on("error", (e) => { console.error("client: " + e.message); process.exit(1); });
process.on("SIGTERM", () => { console.log("client: " + n + " messages"); process.exit(0); });
JS
fi

INSTANCE=${INSTANCE:-43}
PORT=${PORT:-7943}
results=$work/results

# one VARIANT ROUND: a halhost run of D seconds, with or without the page.
one() {
	variant=$1 round=$2
	shift 2
	"$work/halhost" -rtapi.instance "$INSTANCE" -base "$BASE" "$@" >"$work/host.out" 2>&1 &
	host=$!
	pids="$host"
	i=0
	until grep -q "halhost ready" "$work/host.out"; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 $host 2>/dev/null; then
			cat "$work/host.out" >&2
			echo "bench.sh: halhost did not start" >&2
			exit 1
		fi
		sleep 0.1
	done
	if [ "$variant" = browser ]; then
		"$work/halweb" -rtapi.instance "$INSTANCE" -data-key 0x48414c50 -stats-key 0x48414c48 \
			-http "127.0.0.1:$PORT" -token-file "$work/token" >"$work/web.out" 2>&1 &
		web=$!
		pids="$web $host"
		i=0
		until grep -q "serving" "$work/web.out"; do
			i=$((i + 1))
			if [ $i -gt 100 ] || ! kill -0 $web 2>/dev/null; then
				cat "$work/web.out" >&2
				echo "bench.sh: halweb did not start" >&2
				exit 1
			fi
			sleep 0.1
		done
		token=$(cat "$work/token")
		curl -sf -H "Authorization: Bearer $token" -H "Content-Type: application/json" \
			-d '{"thread":"base","pins":["pos-cmd","pos-fb","torque"],"trigger":0,"edge":"rising","level":0,"mode":"auto","samples":4000,"position":0.5}' \
			"http://127.0.0.1:$PORT/api/scope" >/dev/null
		if [ "$CLIENT" = ws ]; then
			setsid node "$work/client.js" "$work" "ws://127.0.0.1:$PORT/ws" "$token" >"$work/client.out" 2>&1 &
		else
		setsid chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
			--disable-background-networking --disable-component-update --disable-sync \
			--user-data-dir="$work/profile" --remote-debugging-port=0 \
			"http://127.0.0.1:$PORT/?token=$token" >"$work/chromium.out" 2>&1 &
		fi
		browser=$!
		pids="$browser $web $host"
	fi
	sleep "$D"
	if [ "$variant" = browser ]; then
		kill -TERM -- "-$browser" 2>/dev/null || kill $browser # its own session: its children too
		wait $browser 2>/dev/null || true
		kill -INT $web; wait $web 2>/dev/null || true
		rm -rf "$work/profile"
		[ "$CLIENT" = ws ] && cat "$work/client.out"
	fi
	kill -INT $host
	wait $host || true
	pids=""
	grep "wake-up latency" "$work/host.out" | sed 's/halhost: thread //' | while read -r name _ _ _ max _ p999 _; do
		echo "$round $variant $name ${max%,} ${p999%,}"
	done >>"$results"
	grep "wake-up latency" "$work/host.out" | sed "s/^/round $round $variant: /"
}

: >"$results"
r=1
while [ $r -le "$ROUNDS" ]; do
	if [ $((r % 2)) -eq 1 ]; then
		one none $r "$@"
		one browser $r "$@"
	else
		one browser $r "$@"
		one none $r "$@"
	fi
	r=$((r + 1))
done

# medians (Go durations: to ns first) and ratios
awk '
function ns(s) {
	if (sub(/ms$/, "", s)) return s * 1e6
	if (sub(/µs$/, "", s) || sub(/us$/, "", s)) return s * 1e3
	if (sub(/ns$/, "", s)) return s * 1
	if (sub(/s$/, "", s)) return s * 1e9
	return s * 1
}
function median(key,   n, i, j, t, a) {
	n = split(vals[key], a, " ")
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
{ k = $3 SUBSEP $2; vals[k "max"] = vals[k "max"] " " ns($4); vals[k "p"] = vals[k "p"] " " ns($5); threads[$3] = 1 }
END {
	printf "%-8s %14s %14s %14s %14s %8s %8s\n", "thread", "max none", "max browser", "p99.9 none", "p99.9 brws", "max x", "p99.9 x"
	for (th in threads) {
		mn = median(th SUBSEP "none" "max"); mb = median(th SUBSEP "browser" "max")
		pn = median(th SUBSEP "none" "p"); pb = median(th SUBSEP "browser" "p")
		printf "%-8s %12.0fns %12.0fns %12.0fns %12.0fns %8.2f %8.2f\n", th, mn, mb, pn, pb, (mn ? mb/mn : 0), (pn ? pb/pn : 0)
	}
}' "$results"
