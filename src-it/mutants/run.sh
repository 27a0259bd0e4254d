#!/usr/bin/env bash
# Puts back each one-line defect of src-it/mutants/*.patch, one at a time, and runs the checker
# its header names ("# checker: CheckerTest"): first CI's fixed seeds, then, if those miss it, a
# long run of at most BUDGET seconds from seed FROM; or, for a defect the checker's workloads do
# not reach yet, the test class (or class#method) its header names ("# test: LeaseShortfallTest"),
# once; or, for a defect a unit test of the filter catches, that test ("# unit: RuleTest"), once.
# A defect only some targets reach names them ("# targets: CLUSTER,CLUSTER_RESILIENT", for
# the long run) and the test method of CI's fixed seeds on them ("# fixed:
# fixedSeedsKeepEveryPromiseOnTheCluster"). Prints
# one line per mutant: caught (where, after how long) or missed. The working tree is restored
# after each, also when interrupted.
#
# Usage: src-it/mutants/run.sh [name...]     (default: every patch)
#   BUDGET  seconds of long run per mutant after the fixed seeds (default 60)
#   FROM    first seed of the long run (default 1000)
# Needs a clean working tree for the files the patches touch, and valkey-server on PATH.
set -uo pipefail
cd "$(dirname "$0")/../.."

budget="${BUDGET:-60}"
from="${FROM:-1000}"
dir=src-it/mutants
log=src-it/target/mutants
mkdir -p "$log"

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for patch in "$dir"/*.patch; do names+=("$(basename "$patch" .patch)"); done
fi

applied=""
restore() {
  if [ -n "$applied" ]; then
    git apply -R "$applied" || echo "mutants: could not restore $applied: check git status" >&2
    applied=""
  fi
}
# At the end, or when interrupted: the sources restored, and the modules installed from them again
# (the tests of src-it use the installed ones).
finish() {
  restore
  build || echo "mutants: the restored build fails: see $log/build.log" >&2
}
trap finish EXIT INT TERM

# Builds what the tests use, quietly, and the tests themselves: a run that fails to compile must
# not pass for a defect caught. The modules a patch touches are among these.
build() {
  ./mvnw -q -B -ntp -o install -DskipTests -pl filter,jakarta,cli,micrometer >"$log/build.log" 2>&1 \
    && ./mvnw -q -B -ntp -o test-compile -pl src-it >>"$log/build.log" 2>&1
}

if ! build; then
  echo "mutants: the unmutated build fails: see $log/build.log" >&2
  exit 2
fi

caught=0
missed=0
for name in "${names[@]}"; do
  patch="$dir/$name.patch"
  test=$(sed -n 's/^# checker: *//p' "$patch" | head -1)
  plain=$(sed -n 's/^# test: *//p' "$patch" | head -1)
  unit=$(sed -n 's/^# unit: *//p' "$patch" | head -1)
  fixed=$(sed -n 's/^# fixed: *//p' "$patch" | head -1)
  targets=$(sed -n 's/^# targets: *//p' "$patch" | head -1)
  what=$(sed -n '1s/^# *//p' "$patch")
  git apply "$patch" || { echo "$name: does not apply"; missed=$((missed + 1)); continue; }
  applied="$patch"
  began=$(date +%s)
  if ! build; then
    echo "$name: CAUGHT by the compiler (see $log/build.log) -- $what"
    caught=$((caught + 1))
    restore
    continue
  fi
  result=missed
  where=""
  if [ -n "$unit" ]; then
    if ! ./mvnw -B -ntp -o test -pl filter -Dtest="$unit" -Dsurefire.failIfNoSpecifiedTests=false \
        >"$log/$name-unit.log" 2>&1; then
      result=caught
      where="by $unit"
    fi
  elif [ -n "$plain" ]; then
    if ! ./mvnw -B -ntp -o test -pl src-it -Dtest="$plain" -Dsurefire.failIfNoSpecifiedTests=false \
        >"$log/$name-test.log" 2>&1; then
      result=caught
      where="by $plain"
    fi
  elif ! ./mvnw -B -ntp -o test -pl src-it -Dtest="$test#${fixed:-fixedSeedsKeepEveryPromise}" \
      -Dsurefire.failIfNoSpecifiedTests=false >"$log/$name-fixed.log" 2>&1; then
    result=caught
    where="by CI's fixed seeds"
  elif ! ./mvnw -B -ntp -o test -pl src-it -Dtest="$test#theChosenSeedsKeepEveryPromise" \
      -Dchecker.seconds="$budget" -Dchecker.seed="$from" ${targets:+-Dchecker.targets="$targets"} \
      -Dsurefire.failIfNoSpecifiedTests=false >"$log/$name-long.log" 2>&1; then
    result=caught
    where="in the long run: $(grep -o 'caught in run [0-9]* (seeds [0-9]* to [0-9]*), [0-9]* ms into the long run' \
        "$log/$name-long.log" | head -1)"
  fi
  took=$(( $(date +%s) - began ))
  if [ "$result" = caught ]; then
    caught=$((caught + 1))
    echo "$name: CAUGHT $where, ${took} s with the build -- $what"
  else
    missed=$((missed + 1))
    if [ -n "$unit$plain" ]; then
      echo "$name: MISSED by $unit$plain -- $what"
    else
      echo "$name: MISSED within CI's fixed seeds and ${budget} s from seed $from -- $what"
    fi
  fi
  restore
done
echo "mutants: $caught caught, $missed missed (logs in $log)"
[ "$missed" -eq 0 ]
