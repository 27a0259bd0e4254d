#!/usr/bin/env bash
# The filter's HTTP overhead, measured with wrk on the example application, and the deny cache
# against a client over its limit. Prints requests/s and latency percentiles of:
#   off       ratelimit.enabled=false
#   on        the api rule with a limit no request reaches (every request decided by Valkey)
#   lease     the same with local leases of 64 units for 50 ms (most requests decided here)
#   hammer    the api rule at its real limit: every request rejected, deny cache on
#   hammer-nc the same with the deny cache off
# Usage: bench/http-overhead.sh  (needs wrk and valkey-server; WRK="-t2 -c32 -d10s" to change the load,
#        WARM="-t2 -c32 -d8s" the warm-up before it, RUNS="off on" to run only some)
set -euo pipefail
cd "$(dirname "$0")/.."
load=${WRK:--t2 -c32 -d10s}
warm=${WARM:--t2 -c32 -d8s}
./mvnw -q -B -pl examples/server -am -DskipTests install -Dmaven.install.skip=false >/dev/null 2>&1 || true
vport=$(( 20000 + RANDOM % 20000 ))
valkey-server --port "$vport" --bind 127.0.0.1 --save '' --appendonly no >/dev/null &
valkey_pid=$!
trap 'kill $valkey_pid 2>/dev/null || true' EXIT
sleep 0.5

run() { # name, then environment assignments
  local name=$1; shift
  local port=$(( 30000 + RANDOM % 20000 ))
  # The README's command, in its own process group so that it stops whole.
  env "$@" VALKEY_URL="redis://127.0.0.1:$vport" PORT=$port \
    setsid ./mvnw -q -B -o -pl examples/server -am -Prun-example -DskipTests verify >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 300); do curl -s -o /dev/null "http://127.0.0.1:$port/search" && break; sleep 0.2; done
  # The JIT compiles the filter's path first: a short load is thrown away.
  wrk $warm "http://127.0.0.1:$port/api/hello" > /dev/null
  wrk $load --latency "http://127.0.0.1:$port/api/hello" > /tmp/wrk-$name.txt
  kill -TERM -- "-$pid"; wait $pid 2>/dev/null || true
  echo "$name: $(grep 'Requests/sec' /tmp/wrk-$name.txt | awk '{print $2}') req/s, p50 $(grep ' 50%' /tmp/wrk-$name.txt | awk '{print $2}'), p99 $(grep ' 99%' /tmp/wrk-$name.txt | awk '{print $2}'), non-2xx: $(grep -o 'Non-2xx or 3xx responses: [0-9]*' /tmp/wrk-$name.txt | awk '{print $NF}')"
}
runs=${RUNS:-off on hammer hammer-nc}
for r in $runs; do
  case $r in
    off) run off RATELIMIT_ENABLED=false ;;
    on) run on RATELIMIT_RULE_API_LIMIT=1000000000 RATELIMIT_RULE_API_BURST=1000000000 ;;
    lease) run lease RATELIMIT_RULE_API_LIMIT=1000000000 RATELIMIT_RULE_API_BURST=1000000000 \
      RATELIMIT_RULE_API_LOCAL_LEASE=${LEASE:-64} RATELIMIT_RULE_API_LOCAL_LEASE_TIME=50ms ;;
    hammer) run hammer RATELIMIT_DENY_CACHE_ENABLED=true ;;
    hammer-nc) run hammer-nc RATELIMIT_DENY_CACHE_ENABLED=false ;;
  esac
done
