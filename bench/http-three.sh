#!/usr/bin/env bash
# Over HTTP, one application (HttpBenchServer: GET /api/hello on embedded Jetty 12) behind each
# filter a user would pick, side by side in one run, each keyed by the client's address with a
# limit no request reaches:
#   off       no filter
#   ours      RateLimitFilter, a token bucket (settings: the system properties below, plus $OURS)
#   minimal   one EVALSHA of the source article's minimal token-bucket script per request on a
#             pooled Jedis client: the floor of one round trip
#   bucket4j  Bucket4j's JedisBasedProxyManager (compare-and-swap) in a filter
#   ours-direct  ours with ratelimit.valkey.pipelines=0: every call on its own pooled connection,
#             no hand-off between request threads (not in the default MODES)
#   ours-hammer  ours with a limit of one an hour: every request after the first refused, from
#             the deny cache (not in the default MODES)
#   canned    no limiter: a filter answering every request with a fixed 429 of the shape
#             ours-hammer sends, the floor of answering it (not in the default MODES)
# Prints per filter and round: requests/s, p50, p99, the JVM's CPU µs and context switches per
# request, Valkey's µs and commands per request; then, per round, ours ÷ minimal and ours ÷
# bucket4j (requests/s) and the p99 each filter adds to off; with canned, canned ÷ off (what the
# 429's size costs) and ours-hammer ÷ canned (what our path to it costs) and ÷ off.
# Usage: bench/http-three.sh  (needs wrk and valkey-server). WRK="-t2 -c32 -d10s" the load,
#        WARM="-t2 -c32 -d20s" the warm-up thrown away before it, ROUNDS=2 (the order rotates each
#        round), MODES="off ours minimal bucket4j", OURS="-Dratelimit.valkey.pipelines=0" more
#        settings of ours.
set -euo pipefail
cd "$(dirname "$0")/.."
load=${WRK:--t2 -c32 -d10s}
warm=${WARM:--t2 -c32 -d20s}
rounds=${ROUNDS:-2}
read -r -a modes <<< "${MODES:-off ours minimal bucket4j}"
./mvnw -q -B -o -pl src-it,bench -am install -DskipTests -Djapicmp.skip=true >/dev/null
./mvnw -q -B -o -pl bench dependency:build-classpath -Dmdep.outputFile=/tmp/http-three-cp.txt >/dev/null
classpath="bench/target/classes:$(cat /tmp/http-three-cp.txt)"
vport=$(( 20000 + RANDOM % 20000 ))
valkey-server --port "$vport" --bind 127.0.0.1 --save '' --appendonly no >/dev/null &
valkey_pid=$!
server_pid=
trap 'kill $valkey_pid ${server_pid:-} 2>/dev/null || true' EXIT
sleep 0.5
source bench/http-measure.sh

declare -A rps p99
ms() { # a wrk latency (e.g. 1.23ms, 850.00us, 1.10s) in ms
  awk -v v="$1" 'BEGIN { if (v ~ /us$/) print v / 1000; else if (v ~ /ms$/) print v + 0; else print v * 1000 }'
}

run() { # mode, round
  local mode=$1 round=$2
  local port=$(( 30000 + RANDOM % 20000 ))
  local serve=$mode extra=
  [[ $mode == ours-direct ]] && serve=ours extra=-Dratelimit.valkey.pipelines=0
  [[ $mode == ours-hammer ]] && serve=ours extra="-Dratelimit.rule.api.limit=1 -Dratelimit.rule.api.window=1h -Dratelimit.deny-cache.enabled=true"
  # shellcheck disable=SC2086
  java -cp "$classpath" -Dratelimit.valkey.url="redis://127.0.0.1:$vport" -Dratelimit.rules=api \
    -Dratelimit.rule.api.key=ip -Dratelimit.rule.api.algorithm=token-bucket \
    -Dratelimit.rule.api.limit=1000000000 -Dratelimit.rule.api.window=1s $extra ${OURS:-} \
    dev.ratelimit.bench.HttpBenchServer "$serve" "$port" "redis://127.0.0.1:$vport" >/tmp/http-three-$mode.log 2>&1 &
  server_pid=$!
  for _ in $(seq 300); do curl -s -o /dev/null "http://127.0.0.1:$port/api/hello" && break; sleep 0.2; done
  # The JIT compiles the path first (C2 is busy for a while on these two cores): a load thrown away.
  wrk $warm "http://127.0.0.1:$port/api/hello" > /dev/null
  local before; before=$(cpu_now "$server_pid")
  wrk $load --latency "http://127.0.0.1:$port/api/hello" > /tmp/wrk-three-$mode.txt
  local after; after=$(cpu_now "$server_pid")
  local requests; requests=$(awk '/requests in/ {print $1}' /tmp/wrk-three-$mode.txt)
  kill "$server_pid"; wait "$server_pid" 2>/dev/null || true
  server_pid=
  valkey-cli -p "$vport" flushall >/dev/null
  local non2xx; non2xx=$( (grep -o 'Non-2xx or 3xx responses: [0-9]*' /tmp/wrk-three-$mode.txt || true) | awk '{print $NF}')
  rps[$mode]=$(awk '/Requests\/sec/ {print $2}' /tmp/wrk-three-$mode.txt)
  p99[$mode]=$(ms "$(awk '$1 == "99%" {print $2}' /tmp/wrk-three-$mode.txt)")
  echo "round $round $mode: ${rps[$mode]} req/s, p50 $(awk '$1 == "50%" {print $2}' /tmp/wrk-three-$mode.txt), p99 ${p99[$mode]} ms, non-2xx ${non2xx:-0}; per request $(per_request "$before" "$after" "$requests")"
}

for round in $(seq "$rounds"); do
  n=${#modes[@]}
  for i in $(seq 0 $(( n - 1 ))); do
    run "${modes[$(( (i + round - 1) % n ))]}" "$round"
  done
  ratio() { awk -v a="${rps[$1]:-0}" -v b="${rps[$2]:-0}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
  added() { awk -v a="${p99[$1]:-0}" -v b="${p99[off]:-0}" 'BEGIN { printf "%+.2f ms", a - b }'; }
  echo "round $round: ours / minimal $(ratio ours minimal)x, ours / bucket4j $(ratio ours bucket4j)x, minimal / off $(ratio minimal off)x; p99 added to off: ours $(added ours), minimal $(added minimal), bucket4j $(added bucket4j)${rps[ours-direct]:+; ours-direct / minimal $(ratio ours-direct minimal)x, p99 added $(added ours-direct)}${rps[canned]:+; canned 429 / off $(ratio canned off)x, ours-hammer / canned $(ratio ours-hammer canned)x, ours-hammer / off $(ratio ours-hammer off)x}"
done
