#!/usr/bin/env bash
# Capacity at internet scale, on paper from measurement (dev.ratelimit.bench.Capacity): Valkey
# memory per key of every algorithm, the minimal script and Bucket4j; Valkey calls per decision
# with and without local leases on Zipf workloads and on keys seen once; the server's CPU per
# call; and the table of primaries and memory for 100k-10M decisions/s and 1M-100M keys.
# Usage: bench/capacity.sh  (needs valkey-server). BENCH_KEYS=1000000 keys per memory
#        measurement, BENCH_DECISIONS=400000 per calls measurement, BENCH_LEASE=64 units per lease,
#        BENCH_LEASE_TIME=0.05S its time (seconds), BENCH_PARTS=memory,calls,server the parts to run
#        (the table needs all three).
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -q -B -o -pl src-it,bench -am install -DskipTests -Djapicmp.skip=true >/dev/null
./mvnw -q -B -o -pl bench dependency:build-classpath -Dmdep.outputFile=/tmp/capacity-cp.txt >/dev/null
exec java -Xmx4g -cp "bench/target/classes:$(cat /tmp/capacity-cp.txt)" dev.ratelimit.bench.Capacity
