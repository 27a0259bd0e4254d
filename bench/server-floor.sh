#!/usr/bin/env bash
# What bounds the server's cost per decision: valkey-benchmark (one C client, so the JVM takes
# no CPU from the server) calls, in interleaved rounds on an empty throwaway valkey-server,
#   - an empty function, with 1 and with our 9 arguments (the price of FCALL and its ARGV),
#   - a function doing only TIME + GET + SET (our token bucket's server calls, no logic),
#   - the source article's minimal token-bucket script (EVALSHA),
#   - our token bucket on the server clock and on the client clock, and three rules in one call,
#   - the server's work any version of ours must do, for one rule and for three (server_work:
#     TIME, each rule's numbers parsed, its GET, its state formatted and SET, its eight reply
#     values; no arithmetic), the floor the Lua of the dispatcher and the algorithms adds to,
#     and the minimal script's own (its HMGET, HSET, PEXPIRE and reply, no refill arithmetic),
# and prints usec_per_call from INFO commandstats, the median of the rounds, and each as a ratio
# to the minimal script. Needs valkey-server, valkey-cli, valkey-benchmark and a built filter
# jar (./mvnw -q install -DskipTests).
#   ROUNDS (default 5), CALLS per measurement (default 20000), PORT (default a free one),
#   AGAINST=<git revision>: our token bucket and three rules of that revision's library too.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
CALLS=${CALLS:-20000}
PORT=${PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}
DIR=$(mktemp -d)
valkey-server --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$DIR" --daemonize yes \
  --pidfile "$DIR/pid" --logfile "$DIR/log"
trap 'kill "$(cat "$DIR/pid")" 2>/dev/null; rm -rf "$DIR"' EXIT
CLI="valkey-cli -p $PORT"
until $CLI PING >/dev/null 2>&1; do sleep 0.1; done

# The library exactly as the limiter assembles it (LimiterScript): prelude, algorithms, dispatcher;
# from the work tree, or (a second argument) from a git revision's files.
R=filter/src/main/resources/dev/ratelimit/valkey/script
load_library() { # function name, [revision]
  local name=$1 rev=${2:-} lib="$DIR/$1.lua"
  part() { if [[ -n $rev ]]; then git show "$rev:$R/$1"; else cat "$R/$1"; fi; }
  {
    echo "#!lua name=$name"
    echo "local RULE_ARGS, RULE_REPLY, REFUND_ARGS = 9, 8, 10"
    part prelude.lua; part bucket.lua
    echo; echo "local ALGORITHMS = {}"
    for a in fixed-window sliding-window-counter sliding-log token-bucket gcra concurrency; do
      echo; echo "ALGORITHMS['$a'] = (function()"; part "$a.lua"; echo; echo "end)()"
    done
    echo; echo "redis.register_function('$name', (function()"; part dispatcher.lua; echo; echo "end)())"
  } > "$lib"
  $CLI -x FUNCTION LOAD REPLACE < "$lib" >/dev/null
}
load_library ratelimit_floor
$CLI FUNCTION LOAD REPLACE "#!lua name=floor
redis.register_function('empty', function(keys, args) return 1 end)
redis.register_function('time_get_set', function(keys, args)
  local t = redis.call('TIME')
  local v = redis.call('GET', keys[1])
  redis.call('SET', keys[1], '0:1764000000000:60000:100', 'PX', 60000)
  return { 1, 1, 99, 600, 0 }
end)
-- What no version of our logic can do without, per rule: its numbers parsed, its state written
-- as one formatted string, its eight reply values; and per call the server's clock. Nothing
-- else: no arithmetic, no function of the dispatcher or the algorithms.
redis.register_function('server_work', function(keys, args)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local reply = { 1 }
  for i = 1, #keys do
    local at = 4 + 9 * (i - 1)
    local limit, window, burst, cost = tonumber(args[at + 1]), tonumber(args[at + 2]), tonumber(args[at + 3]),
      tonumber(args[at + 4])
    local v = redis.call('GET', keys[i])
    redis.call('SET', keys[i], string.format('%d:%d:%d:%d:%d', cost * window, now, window, limit, 7), 'PX', window)
    local r = 2 + 8 * (i - 1)
    reply[r], reply[r + 1], reply[r + 2], reply[r + 3] = 1, burst - cost, window, window
    reply[r + 4], reply[r + 5], reply[r + 6], reply[r + 7] = 0, now, 7, 0
  end
  return reply
end)" >/dev/null
SHA=$($CLI SCRIPT LOAD "$(cat bench/src/main/resources/dev/ratelimit/bench/minimal-token-bucket.lua)")
# The minimal script's own server work, the same way: its numbers parsed, its three calls, its
# three reply values, no refill arithmetic.
SHA_WORK=$($CLI SCRIPT LOAD 'local capacity, rate, now, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local state = redis.call("HMGET", KEYS[1], "tokens", "ts")
redis.call("HSET", KEYS[1], "tokens", capacity - cost, "ts", now)
redis.call("PEXPIRE", KEYS[1], 61000)
return { 1, capacity - cost, 0 }')
NOW=$(date +%s%3N)
TB="token-bucket 100 60000 100 1 0 0 0 0"

declare -A CASES=(
  [1-empty]="FCALL empty 1 e:{__rand_int__}"
  [2-empty-9-args]="FCALL empty 1 e:{__rand_int__} -1 1 7 $TB"
  [3-time-get-set]="FCALL time_get_set 1 t:{__rand_int__}"
  [4-minimal]="EVALSHA $SHA 1 m:{__rand_int__} 100 1.6667 $NOW 1"
  [4a-minimal-server-work]="EVALSHA $SHA_WORK 1 n:{__rand_int__} 100 1.6667 $NOW 1"
  [5-token-bucket]="FCALL ratelimit_floor 1 tb:{__rand_int__} -1 1 7 $TB"
  [6-token-bucket-client-clock]="FCALL ratelimit_floor 1 tc:{__rand_int__} $NOW 1 7 $TB"
  [5a-server-work-one-rule]="FCALL server_work 1 w:{__rand_int__} -1 1 7 $TB"
  [7a-server-work-three-rules]="FCALL server_work 3 x:{__rand_int__} y:{__rand_int__} z:{__rand_int__} -1 1 7 $TB gcra 100 60000 100 1 0 0 0 0 fixed-window 100 60000 0 1 0 0 0 0"
  [7-three-rules]="FCALL ratelimit_floor 3 a:{__rand_int__} b:{__rand_int__} c:{__rand_int__} -1 1 7 $TB gcra 100 60000 100 1 0 0 0 0 fixed-window 100 60000 0 1 0 0 0 0"
)
if [[ -n ${AGAINST:-} ]]; then
  # The same two calls on the library of an earlier revision, in the same rounds.
  load_library ratelimit_against "$AGAINST"
  CASES[5b-token-bucket-at-$AGAINST]="FCALL ratelimit_against 1 ta:{__rand_int__} -1 1 7 $TB"
  CASES[7b-three-rules-at-$AGAINST]="FCALL ratelimit_against 3 d:{__rand_int__} e:{__rand_int__} f:{__rand_int__} -1 1 7 $TB gcra 100 60000 100 1 0 0 0 0 fixed-window 100 60000 0 1 0 0 0 0"
fi
declare -A SAMPLES
for round in $(seq "$ROUNDS"); do
  for name in $(printf '%s\n' "${!CASES[@]}" | sort); do
    $CLI FLUSHALL >/dev/null
    $CLI CONFIG RESETSTAT >/dev/null
    # shellcheck disable=SC2086
    valkey-benchmark -p "$PORT" -c 1 -n "$CALLS" -r 100000 -q ${CASES[$name]} >/dev/null
    usec=$($CLI INFO commandstats | grep -E '^cmdstat_(fcall|evalsha):' | sed 's/.*usec_per_call=\([0-9.]*\).*/\1/')
    SAMPLES[$name]="${SAMPLES[$name]:-} $usec"
  done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
MINIMAL=$(echo "${SAMPLES[4-minimal]}" | median)
echo "usec_per_call, median of $ROUNDS rounds of $CALLS calls on 100k random keys (valkey-benchmark -c 1)"
for name in $(printf '%s\n' "${!CASES[@]}" | sort); do
  m=$(echo "${SAMPLES[$name]}" | median)
  printf '%-30s %7.2f us %6.2fx minimal   (rounds:%s)\n' "${name#*-}" "$m" "$(echo "$m / $MINIMAL" | bc -l)" "${SAMPLES[$name]}"
done
