#!/usr/bin/env bash
# Deploys the example WAR on a full Jakarta EE / MicroProfile server fetched from Maven Central,
# checks the filter's promises over HTTP, and stops the server:
#   - /api/hello answers 200 with RateLimit-Policy and RateLimit,
#   - /api/async (an async servlet behind the filter) answers 200,
#   - the api rule's burst of 5 ends in a 429 with Retry-After,
#   - /metrics (ratelimit-micrometer in the WAR) counts the rejections,
#   - /rest/greet/{name} (a Jakarta REST method with @RateLimited) refuses a name's fourth call
#     in a minute, and not another name's,
#   - POST /rest/welcome/{address} (calling a CDI bean method with @RateLimited) refuses an
#     address's third mail in an hour, and not another address's,
#   - a query parameter named like either method's key lifts neither limit, and a request both
#     the route rule rest and a method rule decide names both, a refusal by the method taking
#     nothing of rest.
#
# Usage: examples/containers/run.sh liberty|wildfly|payara
#   VALKEY_URL  the Valkey to use (default: a throwaway valkey-server on a free port)
#   PORT        the HTTP port (default 18080)
#   WORK        where servers are unpacked (default target/containers)
# Versions (override with LIBERTY_VERSION, WILDFLY_VERSION, PAYARA_VERSION) are those the README
# lists. Payara Micro 7 needs Java 21 or newer: set JAVA_HOME to one.
set -euo pipefail
cd "$(dirname "$0")/../.."

server="${1:?usage: $0 liberty|wildfly|payara}"
port="${PORT:-18080}"
work="${WORK:-target/containers}"
case "$work" in /*) ;; *) work="$(pwd)/$work" ;; esac
LIBERTY_VERSION="${LIBERTY_VERSION:-26.0.0.3}"
WILDFLY_VERSION="${WILDFLY_VERSION:-39.0.1.Final}"
PAYARA_VERSION="${PAYARA_VERSION:-7.2026.11}"
java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
mkdir -p "$work"

fetch() { # groupId:artifactId:version:packaging -> the file's path
  ./mvnw -q -B dependency:copy -Dartifact="$1" -DoutputDirectory="$work/downloads" -Dmdep.useBaseVersion=true >&2
  local a="${1#*:}"; a="${a%%:*}"; local v="${1#*:*:}"; v="${v%%:*}"
  ls "$work/downloads/$a-$v".*
}

valkey_pid=""
server_pid=""
cleanup() {
  # The server runs in its own process group (setsid): its launcher script and the JVM it
  # starts both stop. Wait for them (at most 60 s), so the script returns once they are gone.
  if [ -n "$server_pid" ]; then
    kill -TERM -- "-$server_pid" 2>/dev/null || true
    for _ in $(seq 60); do kill -0 -- "-$server_pid" 2>/dev/null || break; sleep 1; done
    kill -KILL -- "-$server_pid" 2>/dev/null || true
  fi
  if [ -n "$valkey_pid" ]; then
    kill "$valkey_pid" 2>/dev/null || true
    wait "$valkey_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT

if [ -z "${VALKEY_URL:-}" ]; then
  vport=$(( 20000 + RANDOM % 20000 ))
  valkey-server --port "$vport" --bind 127.0.0.1 --save '' --appendonly no --daemonize no >/dev/null &
  valkey_pid=$!
  VALKEY_URL="redis://127.0.0.1:$vport"
  sleep 0.5
fi
export RATELIMIT_VALKEY_URL="$VALKEY_URL"

if curl -s -o /dev/null "http://127.0.0.1:$port/"; then
  echo "port $port is taken: set PORT" >&2; exit 2
fi
# These servers bring MicroProfile Config themselves; Payara Micro refuses a WAR that carries a
# second one (WildFly and Open Liberty accept it): the WAR for them leaves it out.
./mvnw -q -B -pl examples/webapp -am -DskipTests -Pmicroprofile-server package
war="$work/ratelimit-example.war"
cp examples/webapp/target/ratelimit-example.war "$war"
# Leave the module's own WAR as the tests expect it (with SmallRye Config inside).
./mvnw -q -B -pl examples/webapp -am -DskipTests package
log="$work/$server.log"
context=""

case "$server" in
  wildfly)
    zip=$(fetch "org.wildfly:wildfly-dist:$WILDFLY_VERSION:zip")
    rm -rf "$work/wildfly-$WILDFLY_VERSION" && unzip -q "$zip" -d "$work"
    cp "$war" "$work/wildfly-$WILDFLY_VERSION/standalone/deployments/"
    context="/ratelimit-example"
    setsid "$work/wildfly-$WILDFLY_VERSION/bin/standalone.sh" -b 127.0.0.1 -Djboss.http.port="$port" \
      -Djboss.management.http.port=$((port + 1990)) >"$log" 2>&1 &
    server_pid=$!
    ;;
  payara)
    jar=$(fetch "fish.payara.extras:payara-micro:$PAYARA_VERSION:jar")
    # Loopback only, and no phoning home. Payara Micro has no option for the HTTP listener's
    # address: a command run before boot sets it. --nohazelcast leaves out the data grid, which
    # otherwise listens on 0.0.0.0:6900 (--nocluster does not stop that, and makes Payara Micro
    # ignore --nohazelcast and --interfaces).
    cat >"$work/payara-preboot.txt" <<CMD
set configs.config.server-config.network-config.network-listeners.network-listener.http-listener.address=127.0.0.1
CMD
    setsid "$java" -jar "$jar" --deploy "$war" --contextroot / --port "$port" --nohazelcast --disablephonehome \
      --prebootcommandfile "$work/payara-preboot.txt" >"$log" 2>&1 &
    server_pid=$!
    ;;
  liberty)
    zip=$(fetch "io.openliberty:openliberty-runtime:$LIBERTY_VERSION:zip")
    rm -rf "$work/wlp" && unzip -q "$zip" -d "$work"
    "$work/wlp/bin/server" create ratelimit >/dev/null
    cat >"$work/wlp/usr/servers/ratelimit/server.xml" <<XML
<server>
  <featureManager><feature>servlet-6.0</feature><feature>mpConfig-3.1</feature><feature>restfulWS-3.1</feature><feature>cdi-4.0</feature></featureManager>
  <httpEndpoint id="defaultHttpEndpoint" host="127.0.0.1" httpPort="$port" httpsPort="-1"/>
  <webApplication location="$war" contextRoot="/"/>
</server>
XML
    setsid "$work/wlp/bin/server" run ratelimit >"$log" 2>&1 &
    server_pid=$!
    ;;
  *) echo "unknown server $server: use liberty, wildfly or payara" >&2; exit 2 ;;
esac

base="http://127.0.0.1:$port$context"
sleep 1
ready=""
for _ in $(seq 240); do
  # The listener may answer before the application is deployed: wait for the app itself
  # (on /search, whose own budget the checks below do not use).
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$base/search?q=ready")" = 200 ] && { ready=yes; break; }
  kill -0 "$server_pid" 2>/dev/null || { echo "$server exited; see $log" >&2; tail -40 "$log" >&2; exit 1; }
  sleep 1
done

[ -n "$ready" ] || { echo "FAIL the example never answered on $base; see $log" >&2; tail -40 "$log" >&2; exit 1; }

fail=0
check() { if [ "$2" = "$3" ]; then echo "ok   $1: $2"; else echo "FAIL $1: got $2, expected $3"; fail=1; fi; }
headers=$(curl -s -D - -o /dev/null "$base/api/hello" -H 'X-Forwarded-For: 198.51.100.1')
check "/api/hello status" "$(echo "$headers" | head -1 | awk '{print $2}')" 200
echo "$headers" | grep -i '^ratelimit' || { echo "FAIL no RateLimit fields"; fail=1; }
check "/api/async status" "$(curl -s -o /dev/null -w '%{http_code}' "$base/api/async")" 200
statuses=""
for _ in $(seq 6); do statuses="$statuses $(curl -s -o /dev/null -w '%{http_code}' "$base/api/hello")"; done
echo "six more requests:$statuses"
case "$statuses" in *429*) echo "ok   the burst ends in 429" ;; *) echo "FAIL no 429"; fail=1 ;; esac
# A Jakarta REST method limited by its argument (@RateLimited("greet"): three a minute per name).
greets=""
for _ in $(seq 4); do greets="$greets $(curl -s -o /dev/null -w '%{http_code}' "$base/rest/greet/ada")"; done
check "/rest/greet/ada four times" "$greets" " 200 200 200 429"
greeted=$(curl -s -D - -o /dev/null "$base/rest/greet/grace")
check "/rest/greet/grace (another name)" "$(echo "$greeted" | head -1 | awk '{print $2}')" 200
echo "$greeted" | grep -i '^ratelimit-policy: .*"greet"' || { echo "FAIL no RateLimit-Policy of greet"; fail=1; }
# The method's key is its path parameter: a query parameter named like it lifts nothing.
spoofed=""
for i in 1 2 3 4; do spoofed="$spoofed $(curl -s -o /dev/null -w '%{http_code}' "$base/rest/greet/linus?name=q$i")"; done
check "/rest/greet/linus?name=qN four times" "$spoofed" " 200 200 200 429"
# Both layers on one request: the route rule rest and the method rule greet, named once each;
# the greetings refused gave back what rest took for them.
rest_before=$(curl -s -D - -o /dev/null "$base/rest/greet/margaret" | tr -d '\r' | sed -n 's/^[Rr]ate[Ll]imit: .*"rest";r=\([0-9]*\).*/\1/p')
for _ in 1 2 3 4 5; do curl -s -o /dev/null "$base/rest/greet/margaret"; done
fields=$(curl -s -D - -o /dev/null "$base/rest/greet/barbara" | tr -d '\r')
echo "$fields" | grep -i '^ratelimit-policy: "rest";.*, "greet";' || { echo "FAIL the fields do not name rest and greet"; fail=1; }
rest_after=$(echo "$fields" | sed -n 's/^[Rr]ate[Ll]imit: .*"rest";r=\([0-9]*\).*/\1/p')
# 3 taken (2 more greetings allowed, 1 to a new name), less what the bucket refilled meanwhile; 6 if
# the refused ones kept theirs.
taken=$((rest_before - rest_after))
if [ "$taken" -le 3 ] && [ "$taken" -ge 1 ]; then echo "ok   rest: $taken taken, none by the 3 refused";
else echo "FAIL rest: $taken taken (before $rest_before, after $rest_after): the 3 refused kept theirs?"; fail=1; fi
# A CDI bean method limited by its argument (@RateLimited("welcome"): two an hour per address),
# called by a resource: its refusal is the filter's 429.
welcomes=""
for _ in $(seq 3); do welcomes="$welcomes $(curl -s -o /dev/null -w '%{http_code}' -X POST "$base/rest/welcome/ada")"; done
check "POST /rest/welcome/ada three times" "$welcomes" " 200 200 429"
check "POST /rest/welcome/grace (another address)" \
  "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$base/rest/welcome/grace")" 200
spoofed=""
for i in 1 2 3; do spoofed="$spoofed $(curl -s -o /dev/null -w '%{http_code}' -X POST "$base/rest/welcome/alan?address=z$i")"; done
check "POST /rest/welcome/alan?address=zN three times" "$spoofed" " 200 200 429"
# ratelimit-micrometer in the WAR reports to the example's registry with no code.
rejected=$(curl -s "$base/metrics" | grep '^ratelimit_decisions_total{outcome="rejected",rule="api"}' || true)
if [ -n "$rejected" ]; then echo "ok   /metrics: $rejected"; else echo "FAIL /metrics shows no rejection of api"; fail=1; fi
echo "server log: $log"
exit $fail
