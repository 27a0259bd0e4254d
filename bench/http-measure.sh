# Shared by the HTTP benchmarks (sourced): where the CPU of one load goes, per request.
# Needs $vport, the Valkey port.

cpu_now() { # jvm pid: its user and system ticks, its threads' context switches, Valkey's CPU seconds, calls
  local ticks switches
  ticks=$(awk '{print $14, $15}' "/proc/$1/stat")
  switches=$(cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches/ {n += $2} END {print n}')
  echo "$ticks $switches $(valkey-cli -p "$vport" info cpu | awk -F: '/^used_cpu_(user|sys):/ {s += $2} END {print s}') $(valkey_calls)"
}

valkey_calls() { # scripts and functions Valkey has run (commands inside them not counted)
  valkey-cli -p "$vport" info commandstats | awk -F'[=:,]' '/^cmdstat_(fcall|fcall_ro|evalsha|eval):/ {n += $3} END {print n + 0}'
}

per_request() { # before, after, requests: JVM user and system µs, context switches, Valkey µs and script calls per request
  local hz; hz=$(getconf CLK_TCK)
  echo "$1 $2 $3" | awk -v hz="$hz" '{n = $11; printf "JVM %.0f us user + %.0f us system, %.1f context switches, Valkey %.0f us in %.3f script calls", ($6 - $1) * 1e6 / hz / n, ($7 - $2) * 1e6 / hz / n, ($8 - $3) / n, ($9 - $4) * 1e6 / n, ($10 - $5) / n}'
}
