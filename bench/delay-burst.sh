#!/usr/bin/env bash
# A client bursting twice its limit, against the example application, without and with
# max-delay: the api rule as a token bucket of LIMIT (50) a second, burst LIMIT, one key for
# everyone; each round sends 2 × LIMIT requests at once (curl, as many in parallel), then waits
# for the bucket to fill again. Prints per run: responses 200 and 429, latency p50 / p99 / max
# (curl's time_total), and the server JVM's threads at most while the burst was in flight against
# before it (sampled every 20 ms from /proc): a request held for its slot holds no thread.
#   off     max-delay unset: the burst's second half is refused
#   delay   max-delay=1500ms: the second half is held and passes at the rule's rate
# Usage: bench/delay-burst.sh  (needs curl and valkey-server; ROUNDS=5, LIMIT=50)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
limit=${LIMIT:-50}
burst=$(( 2 * limit ))
./mvnw -q -B -pl examples/server -am -DskipTests install -Dmaven.install.skip=false >/dev/null 2>&1 || true
vport=$(( 20000 + RANDOM % 20000 ))
valkey-server --port "$vport" --bind 127.0.0.1 --save '' --appendonly no >/dev/null &
valkey_pid=$!
trap 'kill $valkey_pid 2>/dev/null || true' EXIT
sleep 0.5

threads() { awk '/^Threads:/ {print $2}' "/proc/$1/status"; }

run() { # name, then environment assignments
  local name=$1; shift
  local port=$(( 30000 + RANDOM % 20000 ))
  env "$@" VALKEY_URL="redis://127.0.0.1:$vport" PORT=$port \
    RATELIMIT_RULE_API_LIMIT=$limit RATELIMIT_RULE_API_WINDOW=1s RATELIMIT_RULE_API_BURST=$limit \
    RATELIMIT_RULE_API_KEY=global \
    setsid ./mvnw -q -B -o -pl examples/server -am -Prun-example -DskipTests verify >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 900); do curl -s -o /dev/null "http://127.0.0.1:$port/search" && break; sleep 0.2; done
  local jvm; jvm=$(pgrep -g "$pid" java | head -1)
  local out=/tmp/delay-burst-$name.txt
  : > "$out"
  # One warm-up burst, thrown away: the JIT compiles the path first.
  seq "$burst" | xargs -P "$burst" -I{} curl -s -o /dev/null "http://127.0.0.1:$port/api/hello" || true
  sleep 2
  local idle peak=0
  idle=$(threads "$jvm")
  for _ in $(seq "$rounds"); do
    seq "$burst" | xargs -P "$burst" -I{} curl -s -o /dev/null -w '%{http_code} %{time_total}\n' \
      "http://127.0.0.1:$port/api/hello" >> "$out" &
    local client=$!
    while kill -0 "$client" 2>/dev/null; do
      local now; now=$(threads "$jvm")
      (( now > peak )) && peak=$now
      sleep 0.02
    done
    # The bucket fills again (50 a second, 1.5 s of delay at most).
    sleep 3
  done
  local n ok refused p50 p99 max
  n=$(wc -l < "$out")
  ok=$(awk '$1 == 200' "$out" | wc -l)
  refused=$(awk '$1 == 429' "$out" | wc -l)
  sort -n -k2 "$out" | awk '{print $2 * 1000}' > "$out.sorted"
  p50=$(sed -n "$(( (n + 1) / 2 ))p" "$out.sorted")
  p99=$(sed -n "$(( (n * 99 + 99) / 100 ))p" "$out.sorted")
  max=$(tail -1 "$out.sorted")
  printf '%-6s %d requests: %d x 200, %d x 429; latency p50 %.0f ms, p99 %.0f ms, max %.0f ms; server threads %d idle, %d at most during the bursts\n' \
    "$name" "$n" "$ok" "$refused" "$p50" "$p99" "$max" "$idle" "$peak"
  kill -- -"$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

run off RATELIMIT_ENABLED=true
run delay RATELIMIT_RULE_API_MAX_DELAY=1500ms
