#!/usr/bin/env bash
# The filter's HTTP overhead, measured with wrk on the example application, and the deny cache
# against a client over its limit. Prints requests/s and latency percentiles of:
#   off       ratelimit.enabled=false
#   on        the api rule with a limit no request reaches (every request decided by Valkey)
#   lease     the same with local leases of 64 units for 50 ms (most requests decided here)
#   hammer    the api rule at its real limit: every request rejected, deny cache on
#   hammer-nc the same with the deny cache off
#   many-off, many-on, many-lease  off, on and lease with requests from CLIENTS (10,000) client
#             addresses, forwarded by a trusted proxy (bench/many-clients.lua): one key each
#   limit, limit-lease  the api rule as a token bucket of 2,000 a second (burst 2,000) that the
#             load exceeds, without and with local leases: the 2xx responses are the units
#             admitted, whose bound is burst + limit × seconds
# Usage: bench/http-overhead.sh  (needs wrk and valkey-server; WRK="-t2 -c32 -d10s" to change the load,
#        WARM="-t2 -c32 -d20s" the warm-up before it, RUNS="off on" to run only some)
set -euo pipefail
cd "$(dirname "$0")/.."
load=${WRK:--t2 -c32 -d10s}
warm=${WARM:--t2 -c32 -d20s}
./mvnw -q -B -pl examples/server -am -DskipTests install -Dmaven.install.skip=false >/dev/null 2>&1 || true
vport=$(( 20000 + RANDOM % 20000 ))
valkey-server --port "$vport" --bind 127.0.0.1 --save '' --appendonly no >/dev/null &
valkey_pid=$!
trap 'kill $valkey_pid 2>/dev/null || true' EXIT
sleep 0.5

source bench/http-measure.sh

run() { # name, then environment assignments
  local name=$1; shift
  local port=$(( 30000 + RANDOM % 20000 ))
  # The README's command, in its own process group so that it stops whole.
  env "$@" VALKEY_URL="redis://127.0.0.1:$vport" PORT=$port \
    setsid ./mvnw -q -B -o -pl examples/server -am -Prun-example -DskipTests verify >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 900); do curl -s -o /dev/null "http://127.0.0.1:$port/search" && break; sleep 0.2; done
  # The JIT compiles the filter's path first (C2 is still busy 20 s in on these two cores): a
  # load is thrown away.
  local script=()
  [[ $name == many-* ]] && script=(-s bench/many-clients.lua)
  wrk $warm "${script[@]}" "http://127.0.0.1:$port/api/hello" > /dev/null
  # Where the CPU goes during the load: the JVM's (user, system), Valkey's, and the JVM's
  # context switches (every thread's), per request.
  local jvm; jvm=$(pgrep -g "$pid" java | head -1)
  local before; before=$(cpu_now "$jvm")
  wrk $load "${script[@]}" --latency "http://127.0.0.1:$port/api/hello" > /tmp/wrk-$name.txt
  local after; after=$(cpu_now "$jvm")
  local requests; requests=$(awk '/requests in/ {print $1}' /tmp/wrk-$name.txt)
  local keys; keys=$(valkey-cli -p "$vport" dbsize); valkey-cli -p "$vport" flushall >/dev/null
  kill -TERM -- "-$pid"; wait $pid 2>/dev/null || true
  local non2xx; non2xx=$( (grep -o 'Non-2xx or 3xx responses: [0-9]*' /tmp/wrk-$name.txt || true) | awk '{print $NF}')
  echo "$name: per request $(per_request "$before" "$after" "$requests"), keys in Valkey $keys, $(grep 'Requests/sec' /tmp/wrk-$name.txt | awk '{print $2}') req/s, p50 $(grep ' 50%' /tmp/wrk-$name.txt | awk '{print $2}'), p99 $(grep ' 99%' /tmp/wrk-$name.txt | awk '{print $2}'), non-2xx: ${non2xx:-0}, 2xx: $(( requests - ${non2xx:-0} ))"
}
runs=${RUNS:-off on hammer hammer-nc}
# Many keys: a limit each key stays well within, whose state Valkey keeps for a while (a key's
# debt of n units lives n × 36 ms), so that the keys left at the end show how many were used.
many_rule="RATELIMIT_RULE_API_LIMIT=100000 RATELIMIT_RULE_API_WINDOW=1h RATELIMIT_RULE_API_BURST=100000"
for r in $runs; do
  case $r in
    off) run off RATELIMIT_ENABLED=false ;;
    on) run on RATELIMIT_RULE_API_LIMIT=1000000000 RATELIMIT_RULE_API_BURST=1000000000 ;;
    lease) run lease RATELIMIT_RULE_API_LIMIT=1000000000 RATELIMIT_RULE_API_BURST=1000000000 \
      RATELIMIT_RULE_API_LOCAL_LEASE=${LEASE:-64} RATELIMIT_RULE_API_LOCAL_LEASE_TIME=50ms ;;
    hammer) run hammer RATELIMIT_DENY_CACHE_ENABLED=true ;;
    hammer-nc) run hammer-nc RATELIMIT_DENY_CACHE_ENABLED=false ;;
    many-off) run many-off RATELIMIT_ENABLED=false ;;
    many-on) run many-on RATELIMIT_TRUSTED_PROXIES=127.0.0.1 $many_rule ;;
    limit) run limit RATELIMIT_RULE_API_ALGORITHM=token-bucket RATELIMIT_RULE_API_LIMIT=2000 \
      RATELIMIT_RULE_API_WINDOW=1s RATELIMIT_RULE_API_BURST=2000 ;;
    limit-lease) run limit-lease RATELIMIT_RULE_API_ALGORITHM=token-bucket RATELIMIT_RULE_API_LIMIT=2000 \
      RATELIMIT_RULE_API_WINDOW=1s RATELIMIT_RULE_API_BURST=2000 RATELIMIT_RULE_API_LOCAL_LEASE=${LEASE:-64} \
      RATELIMIT_RULE_API_LOCAL_LEASE_TIME=50ms ;;
    many-lease) run many-lease RATELIMIT_TRUSTED_PROXIES=127.0.0.1 $many_rule RATELIMIT_RULE_API_LOCAL_LEASE=${LEASE:-64} \
      RATELIMIT_RULE_API_LOCAL_LEASE_TIME=50ms ;;
  esac
done
