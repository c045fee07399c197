#!/bin/sh
# bench.sh measures what halweb costs a host's threads (issue 43): a
# halhost (base and servo threads) runs with one of these attached,
# variant after variant, round after round (each round starts one
# variant later, so none always comes first or last):
#
#	none     nothing
#	sampler  halweb's sampler (its 3 traced pins, linked) added to the base
#	         thread with halcmd, its ring drained every 10 ms by a small
#	         reader (benchclient -drain): the scope's cost without halweb
#	tree     halweb and a client with a watch list of 3 signals, which
#	         reads the tree once a second: no scope
#	scope    as tree, and a scope of the 3 signals on the base thread
#	         (auto, 4000 samples) streamed to the client
#	hog      no halweb: a SCHED_IDLE busy loop on every CPU (stress-ng
#	         --cpu 0 under chrt --idle 0), the control for "any work
#	         at all on the host's CPUs": what busy CPUs cost the host's
#	         threads on this machine, whoever keeps them busy
#
# Each run sets its variant up, waits -settle seconds, then measures
# -d seconds between two SIGUSR1 marks of halhost (it prints each
# thread's wake-up latency since the previous mark), so neither the
# set-up (halweb's start, the sampler's loadrt, addf and links, the
# client's start) nor the tear-down is in the window. It prints each
# run's max and p99.9 and the CPU time what is attached used in the
# window (its "cpu" line, from /proc/PID/stat), then per thread and
# variant their medians, the ratio to none, the none rounds' spread
# (max/min) and each variant's median CPU. The goal is ratios within
# that spread (<= 1.1).
#
#	sudo examples/halweb/bench.sh [-d SECONDS] [-rounds N] [-settle SECONDS] [-base PERIOD]
#	    [-client go|ws|browser] [-client-sched idle|other] [-variants "none sampler tree scope hog"] [-- HALHOST_FLAGS...]
#	examples/halweb/bench.sh -d 2 -rounds 1    # smoke run
#
# Run it on an idle machine, as root for SCHED_FIFO (halhost prints its
# scheduling). The client (-client) reads halweb's stream: go (default)
# is benchclient, a small Go WebSocket client; ws a Node.js one (npm's
# ws, installed into the scratch directory); browser is headless
# Chromium rendering the page. The issue's browser runs on another
# machine: go and ws leave only halweb's own cost on the host's CPUs.
# To stand for that machine further, the client runs SCHED_IDLE (chrt
# --idle 0), so its own reading never takes a CPU from the host or from
# halweb; -client-sched other runs it at normal priority.
# It needs curl, and chromium or node and npm for those clients.
set -eu
D=10
ROUNDS=5
SETTLE=2
BASE=25us
CLIENT=go
VARIANTS="none sampler tree scope"
CLIENTSCHED=idle
usage="usage: bench.sh [-d SECONDS] [-rounds N] [-settle SECONDS] [-base PERIOD] [-client go|ws|browser] [-client-sched idle|other] [-variants \"none sampler tree scope hog\"] [-- HALHOST_FLAGS...]"
while [ $# -gt 0 ]; do
	case $1 in
	-client) CLIENT=$2; shift 2 ;;
	-client-sched) CLIENTSCHED=$2; shift 2 ;;
	-d) D=$2; shift 2 ;;
	-rounds) ROUNDS=$2; shift 2 ;;
	-settle) SETTLE=$2; shift 2 ;;
	-base) BASE=$2; shift 2 ;;
	-variants) VARIANTS=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
case $CLIENTSCHED in
idle) command -v chrt >/dev/null || { echo "bench.sh: -client-sched idle needs chrt (util-linux)" >&2; exit 1; }; asclient="chrt --idle 0" ;;
other) asclient="" ;;
*) echo "bench.sh: -client-sched idle or other" >&2; exit 2 ;;
esac
for v in $VARIANTS; do
	case $v in none | sampler | tree | scope) ;;
	hog) command -v stress-ng >/dev/null && command -v chrt >/dev/null || { echo "bench.sh: variant hog needs stress-ng and chrt" >&2; exit 1; } ;;
	*) echo "bench.sh: variant $v: want none, sampler, tree, scope or hog" >&2; exit 2 ;;
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
go) ;;
browser) command -v chromium >/dev/null || { echo "bench.sh: needs chromium (apt-get install chromium)" >&2; exit 1; } ;;
ws) command -v node >/dev/null && command -v npm >/dev/null || { echo "bench.sh: -client ws needs node and npm" >&2; exit 1; } ;;
*) echo "bench.sh: -client go, ws or browser" >&2; exit 2 ;;
esac
command -v curl >/dev/null || { echo "bench.sh: needs curl" >&2; exit 1; }
(cd "$root" && go build -o "$work/halhost" ./examples/halhost && go build -o "$work/halweb" ./examples/halweb &&
	go build -o "$work/halcmd" ./examples/halcmd && go build -o "$work/benchclient" ./examples/halweb/internal/benchclient)
if [ "$CLIENT" = ws ]; then
	npm install --silent --prefix "$work" ws@8 >/dev/null
	cat >"$work/client.js" <<'JS'
// The page's traffic without a page: a watch list, every message read.
const WebSocket = require(process.argv[2] + "/node_modules/ws");
const ws = new WebSocket(process.argv[3], { headers: { Authorization: "Bearer " + process.argv[4] } });
let n = 0;
ws.on("open", () => ws.send(JSON.stringify({ type: "watch", names: ["pos-cmd", "pos-fb", "torque"] })));
ws.on("message", () => { n++; });
ws.on("error", (e) => { console.error("client: " + e.message); process.exit(1); });
process.on("SIGTERM", () => { console.log("client: " + n + " messages"); process.exit(0); });
JS
fi
# The sampler halweb loads for the scope's three float traces (scope.go:
# one pin per trace, DefaultDepth), linked, on the base thread.
cat >"$work/sampler.hal" <<'HAL'
loadrt sampler cfg=fff depth=16384
linkps sampler.0.pin.0 pos-cmd
linkps sampler.0.pin.1 pos-fb
linkps sampler.0.pin.2 torque
addf sampler.0 base
HAL

INSTANCE=${INSTANCE:-43}
PORT=${PORT:-7943}
results=$work/results

# waitline FILE TEXT PID WHAT: wait up to 10 s for TEXT in FILE while PID lives.
waitline() {
	i=0
	until grep -q "$2" "$1"; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$3" 2>/dev/null; then
			cat "$1" >&2
			echo "bench.sh: $4" >&2
			exit 1
		fi
		sleep 0.1
	done
}

# cputicks PID...: the user and system clock ticks the processes used so
# far (utime and stime, fields 14 and 15 of /proc/PID/stat, counted
# after the name's closing parenthesis), 0 for one that is gone.
cputicks() {
	t=0
	for p in "$@"; do
		n=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | awk '{ print $12 + $13 }')
		t=$((t + ${n:-0}))
	done
	echo $t
}

# startclient: the chosen client of halweb, in its own session.
startclient() {
	token=$(cat "$work/token")
	case $CLIENT in
	go) setsid $asclient "$work/benchclient" -addr "127.0.0.1:$PORT" -token "$token" -watch pos-cmd,pos-fb,torque >"$work/client.out" 2>&1 & ;;
	ws) setsid $asclient node "$work/client.js" "$work" "ws://127.0.0.1:$PORT/ws" "$token" >"$work/client.out" 2>&1 & ;;
	browser)
		setsid $asclient chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
			--disable-background-networking --disable-component-update --disable-sync \
			--user-data-dir="$work/profile" --remote-debugging-port=0 \
			"http://127.0.0.1:$PORT/?token=$token" >"$work/client.out" 2>&1 & ;;
	esac
	client=$!
}

# one VARIANT ROUND [HALHOST_FLAGS]: a halhost run with VARIANT attached,
# measured between its marks 1 and 2.
one() {
	variant=$1 round=$2
	shift 2
	"$work/halhost" -rtapi.instance "$INSTANCE" -base "$BASE" "$@" >"$work/host.out" 2>&1 &
	host=$!
	pids="$host"
	waitline "$work/host.out" "halhost ready" $host "halhost did not start"
	client="" web=""
	case $variant in
	sampler)
		"$work/halcmd" -rtapi.instance "$INSTANCE" -f "$work/sampler.hal"
		setsid $asclient "$work/benchclient" -drain -rtapi.instance "$INSTANCE" >"$work/client.out" 2>&1 &
		client=$!
		;;
	tree | scope)
		"$work/halweb" -rtapi.instance "$INSTANCE" -data-key 0x48414c50 -stats-key 0x48414c48 \
			-http "127.0.0.1:$PORT" -token-file "$work/token" >"$work/web.out" 2>&1 &
		web=$!
		pids="$web $host"
		waitline "$work/web.out" "serving" $web "halweb did not start"
		if [ "$variant" = scope ]; then
			curl -sf -H "Authorization: Bearer $(cat "$work/token")" -H "Content-Type: application/json" \
				-d '{"thread":"base","pins":["pos-cmd","pos-fb","torque"],"trigger":0,"edge":"rising","level":0,"mode":"auto","samples":4000,"position":0.5}' \
				"http://127.0.0.1:$PORT/api/scope" >/dev/null
		fi
		startclient
		;;
	hog)
		setsid chrt --idle 0 stress-ng --cpu 0 --quiet >"$work/client.out" 2>&1 &
		client=$!
		;;
	esac
	[ -n "$client" ] && pids="$client $pids"
	sleep "$SETTLE"
	watched=$(for p in $web $client; do echo $p; pgrep -s "$p" 2>/dev/null || true; done | sort -u)
	ticks=$(cputicks $watched)
	kill -USR1 $host # mark 1: the set-up ends
	waitline "$work/host.out" "mark 1: thread servo" $host "halhost did not mark"
	sleep "$D"
	kill -USR1 $host # mark 2: the window ends
	ticks=$(($(cputicks $watched) - ticks))
	waitline "$work/host.out" "mark 2: thread servo" $host "halhost did not mark"
	pct=$(awk -v t=$ticks -v hz="$(getconf CLK_TCK)" -v d="$D" 'BEGIN { printf "%.1f", 100 * t / hz / d }')
	echo "round $round $variant: cpu $pct% of one CPU in the window (what is attached: halweb, its client, the drain or the hog)"
	echo "$variant $pct" >>"$work/cpu"
	if [ -n "$client" ]; then
		kill -TERM -- "-$client" 2>/dev/null || kill $client # its own session: its children too
		wait $client 2>/dev/null || true
		grep "^client:" "$work/client.out" || true
	fi
	if [ -n "$web" ]; then
		kill -INT $web
		wait $web 2>/dev/null || true
	fi
	rm -rf "$work/profile"
	kill -INT $host
	wait $host || true
	pids=""
	grep "halhost: mark 2: thread" "$work/host.out" | sed 's/halhost: mark 2: thread //' | while read -r name _ _ _ max _ p999 _; do
		echo "$round $variant $name ${max%,} ${p999%,}"
	done >>"$results"
	grep "halhost: mark 2: thread" "$work/host.out" | sed "s/^halhost: mark 2:/round $round $variant:/"
}

: >"$results"
: >"$work/cpu"
n=$(echo $VARIANTS | wc -w)
r=1
while [ $r -le "$ROUNDS" ]; do
	k=0
	for v in $VARIANTS $VARIANTS; do # round r: the variants rotated by r-1
		if [ $k -ge $(((r - 1) % n)) ] && [ $k -lt $(((r - 1) % n + n)) ]; then
			one "$v" $r "$@"
		fi
		k=$((k + 1))
	done
	r=$((r + 1))
done

# medians (Go durations: to ns first), ratios to none, none's spread
awk -v variants="$VARIANTS" '
function ns(s) {
	if (sub(/ms$/, "", s)) return s * 1e6
	if (sub(/µs$/, "", s) || sub(/us$/, "", s)) return s * 1e3
	if (sub(/ns$/, "", s)) return s * 1
	if (sub(/s$/, "", s)) return s * 1e9
	return s * 1
}
function sorted(key, a,   n, i, j, t) {
	n = split(vals[key], a, " ")
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return n
}
function median(key,   n, a) {
	n = sorted(key, a)
	if (n == 0) return 0
	return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
function spread(key,   n, a) {
	n = sorted(key, a)
	return n && a[1] > 0 ? a[n] / a[1] : 0
}
{ k = $3 SUBSEP $2; vals[k "max"] = vals[k "max"] " " ns($4); vals[k "p"] = vals[k "p"] " " ns($5); threads[$3] = 1 }
END {
	nv = split(variants, vs, " ")
	printf "%-7s %-8s %12s %12s %7s %7s\n", "thread", "variant", "max", "p99.9", "max x", "p99.9 x"
	for (th in threads) {
		mn = median(th SUBSEP "none" "max"); pn = median(th SUBSEP "none" "p")
		for (i = 1; i <= nv; i++) {
			v = vs[i]
			m = median(th SUBSEP v "max"); p = median(th SUBSEP v "p")
			printf "%-7s %-8s %10.0fns %10.0fns %7.2f %7.2f\n", th, v, m, p, (mn ? m/mn : 0), (pn ? p/pn : 0)
		}
		printf "%-7s %-8s %12s %12s %7.2f %7.2f\n", th, "spread", "(none", "max/min)", spread(th SUBSEP "none" "max"), spread(th SUBSEP "none" "p")
	}
}' "$results"
# the attached processes' CPU, median per variant
for v in $VARIANTS; do
	awk -v v="$v" '$1 == v { print $2 }' "$work/cpu" | sort -n | awk -v v="$v" '{ a[NR] = $1 } END { if (NR) printf "cpu     %-8s %.1f%% of one CPU (median of %d)\n", v, (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2), NR }'
done
