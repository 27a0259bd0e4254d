package dev.ratelimit.it.checker;

import dev.ratelimit.Claim;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Availability is a promise too: a call to the store fails only where the run injected a fault
 * that explains it, by time and by target. A rule whose every call fails (a script error, a
 * state the algorithm cannot read, a client that throws) is otherwise taken for a store failure
 * and its requests handed to the rule's policy, which the other invariants cannot see.
 *
 * <p>What explains a failed store call (times are the history's real ms):
 * <ul>
 *   <li>a stall of the server (or of a cluster node, or a crowd's): from its start until its end,
 *       and then for the breaker's open period and a grace for calls queued in it;</li>
 *   <li>a Sentinel failover: from its start (the replica promoted while calls go to the old
 *       primary, which refuses them once it is made a replica) until its end, when every
 *       instance's store was answered by the new primary, and then for the breaker's open
 *       period and the grace; an instance that did not reach the new primary by its end is a
 *       violation in itself (the limiter must follow the primary on its own);</li>
 *   <li>errors armed on an instance's client: that instance, until as many of its commands have
 *       failed, then for the breaker's open period;</li>
 *   <li>a restart, a stall, a timeout, client errors: an instance's connections may be left broken
 *       (to the old process, or out of step after a reply that came too late), so until its first
 *       answered call after them, then for the breaker's open period; and a broken connection
 *       idle in the pool fails its next call whenever it is taken, later too: a lost connection
 *       ("end of stream", a reset) is explained up to {@link #STALE_CONNECTIONS} times per
 *       instance after each such fault, once per connection the pool can hold;</li>
 *   <li>a value planted under a rule's key: that rule and key, until it is deleted or the server
 *       restarts, as an unreadable state only;</li>
 *   <li>the breaker refusing a call: an instance whose calls failed within its open period.</li>
 * </ul>
 * A timeout (a socket's, a pool's wait, a cluster call's retry time) is the one failure a busy
 * machine makes alone: it is allowed anywhere (and
 * opens the breaker's period), since it cannot tell a slow box from a slow product; a defect that
 * fails calls fast, with an error, is not hidden by it. And a call that threw to its caller while
 * every store call beneath it was answered is a failure of the limiter itself.
 */
final class Availability {

    static final String INVARIANT = "availability: a call fails only where an injected fault explains it";

    /** Beyond a fault's end: calls queued in a stall time out after it, and a probe may follow. */
    private static final long GRACE_MILLIS = 300;
    /** Connections one instance can hold, each of which may be broken by one fault: the pool's 32 and the pipelines'. */
    static final int STALE_CONNECTIONS = 40;
    private static final Pattern ON_INSTANCE = Pattern.compile("(\\d+) errors on instance (\\d+)");
    private static final Pattern RESETS = Pattern.compile("(\\d+) resets then (\\d+) errors on instance (\\d+)");
    private static final Pattern UNREACHED = Pattern.compile("instance (\\d+) did not reach it within (\\d+) ms");

    private final long breakerOpenMillis;
    private final List<Violation> violations = new ArrayList<>();
    /** Until when (real ms) every instance's failures are explained: a stall, a restart. */
    private long everyoneUntil = Long.MIN_VALUE;
    private boolean stalled;
    /** Whether a Sentinel failover is under way. */
    private boolean failingOver;
    /** Per instance: until when its failures are explained. */
    private final Map<Integer, Long> instanceUntil = new HashMap<>();
    /** Per instance: client errors armed and not yet seen failing a command. */
    private final Map<Integer, Integer> armed = new HashMap<>();
    /** Instances that may hold broken connections: until their next answered call. */
    private final Set<Integer> unsettled = new HashSet<>();
    /** A fault left every instance's connections unsettled (a restart, a stall): those not yet answered since. */
    private long unsettledSince = Long.MIN_VALUE;
    private final Map<Integer, Long> answeredSince = new HashMap<>();
    /** Per instance: lost connections still explained by a fault before (see {@link #STALE_CONNECTIONS}). */
    private final Map<Integer, Integer> stale = new HashMap<>();
    private int instances = 1;
    /** "rule/key" of planted values. */
    private final Set<String> planted = new HashSet<>();

    private Availability(long breakerOpenMillis) {
        this.breakerOpenMillis = breakerOpenMillis;
    }

    /**
     * The failures in a history that no injected fault explains. Only histories that record the
     * store's calls beneath every operation (the runner's, not the HTTP checker's) are checked.
     *
     * @param events the history
     * @return what broke
     */
    static List<Violation> check(List<Event> events) {
        Event.Start start = (Event.Start) events.stream().filter(e -> e instanceof Event.Start).findFirst().orElse(null);
        if (start == null || !Boolean.TRUE.equals(start.options().get("storeEvents"))) {
            return List.of();
        }
        long breakerOpen = ((Number) start.options().getOrDefault("breakerOpenMs", 0)).longValue();
        Availability availability = new Availability(breakerOpen);
        availability.instances = ((Number) start.options().getOrDefault("instances", 1)).intValue();
        Map<Long, Boolean> opFailedInStore = new HashMap<>();
        Map<Long, Event.Call> calls = new HashMap<>();
        for (Event event : events) {
            if (event instanceof Event.Call call) {
                calls.put(call.op(), call);
            }
            availability.see(event, opFailedInStore, calls);
        }
        return availability.violations;
    }

    private void see(Event event, Map<Long, Boolean> opFailedInStore, Map<Long, Event.Call> calls) {
        if (event instanceof Event.Fault fault) {
            fault(fault);
        } else if (event instanceof Event.Wire wire && wire.error() != null) {
            Integer left = armed.get(wire.instance());
            if (left != null && left > 0) {
                armed.put(wire.instance(), left - 1);
                if (left == 1) {
                    explain(wire.instance(), wire.real() + breakerOpenMillis + GRACE_MILLIS);
                }
            }
        } else if (event instanceof Event.StoreCall call) {
            store(call);
            opFailedInStore.merge(call.op(), !call.answered(), Boolean::logicalOr);
        } else if (event instanceof Event.Failed failed && failed.unreadable() == null) {
            Event.Call call = calls.get(failed.op());
            Claim first = call == null || call.claims().isEmpty() ? null : call.claims().get(0);
            Boolean storeFailed = opFailedInStore.get(failed.op());
            if (storeFailed == null) {
                // Nothing beneath it recorded (a peek's call is not): the failure is the store's,
                // as far as the history tells, and needs a fault as a failed store call does.
                judge(failed.op(), failed.at(), failed.real(), call == null ? 0 : call.instance(), failed.error(),
                        call == null ? List.of() : call.claims(), false, null,
                        call == null ? "a call" : call.kind().name().toLowerCase(java.util.Locale.ROOT));
            } else if (!storeFailed) {
                violations.add(new Violation(INVARIANT, "the call threw while every store call beneath it was answered: "
                        + failed.error(), failed.op(), Invariants.STORE, first == null ? "-" : first.rule().name(),
                        first == null ? "-" : first.key(), failed.at(), failed.at()));
            }
        }
    }

    private void fault(Event.Fault fault) {
        switch (fault.kind()) {
            case "stall-begin" -> {
                stalled = true;
                everyoneUntil = Long.MAX_VALUE;
            }
            case "stall-end" -> {
                stalled = false;
                everyoneUntil = fault.real() + breakerOpenMillis + GRACE_MILLIS;
                unsettledSince = fault.real();
                staleEverywhere();
            }
            case "restart" -> {
                planted.clear();
                everyoneUntil = Math.max(everyoneUntil, fault.real() + breakerOpenMillis + GRACE_MILLIS);
                unsettledSince = fault.real();
                staleEverywhere();
            }
            case "failover-begin" -> failingOver = true;
            case "failover-end" -> {
                failingOver = false;
                everyoneUntil = Math.max(everyoneUntil, fault.real() + breakerOpenMillis + GRACE_MILLIS);
                // Connections to the old primary are closed with its pool when a client follows;
                // one borrowed at that moment may still fail when taken back.
                staleEverywhere();
                Matcher unreached = UNREACHED.matcher(fault.detail() == null ? "" : fault.detail());
                while (unreached.find()) {
                    violations.add(new Violation(INVARIANT, "instance " + unreached.group(1) + " did not reach the new "
                            + "primary within " + unreached.group(2) + " ms of every sentinel naming it (" + fault.detail()
                            + "): its calls fail from then on", fault.op(), Invariants.STORE, "-", "-", fault.at(),
                            fault.at()));
                }
            }
            case "plant" -> planted.add(fault.rule() + "/" + fault.key());
            case "unplant" -> planted.remove(fault.rule() + "/" + fault.key());
            case "client-errors" -> arm(fault);
            default -> {
                // function-flush (the next call loads the library again: no call may fail),
                // time-uncertain, restart-impossible: nothing to explain a failure.
            }
        }
    }

    private void arm(Event.Fault fault) {
        Matcher resets = RESETS.matcher(fault.detail());
        Matcher errors = ON_INSTANCE.matcher(fault.detail());
        int instance;
        int count;
        if (resets.find()) {
            count = Integer.parseInt(resets.group(1)) + Integer.parseInt(resets.group(2));
            instance = Integer.parseInt(resets.group(3));
        } else if (errors.find()) {
            count = Integer.parseInt(errors.group(1));
            instance = Integer.parseInt(errors.group(2));
        } else {
            throw new IllegalStateException("client errors of an unknown form: " + fault.detail());
        }
        armed.merge(instance, count, Integer::sum);
        unsettled.add(instance);
        stale.put(instance, STALE_CONNECTIONS);
        explain(instance, Long.MAX_VALUE);
    }

    private void explain(int instance, long until) {
        if (until == Long.MAX_VALUE || armed.getOrDefault(instance, 0) == 0) {
            instanceUntil.put(instance, until);
        }
    }

    private void store(Event.StoreCall call) {
        int instance = call.instance();
        if (call.answered()) {
            // Its broken connections have failed by now, or never will.
            unsettled.remove(instance);
            answeredSince.put(instance, call.real());
            return;
        }
        judge(call.op(), call.at(), call.real(), instance, call.error(), call.claims(), call.refused(), call.unreadable(),
                call.kind());
    }

    /** A failed call of the store: explained, or a violation. */
    private void judge(long op, long at, long real, int instance, String error, List<Claim> claims, boolean refused,
                       String unreadable, String kind) {
        boolean explained = stalled || failingOver || real <= everyoneUntil
                || real <= instanceUntil.getOrDefault(instance, Long.MIN_VALUE)
                || unsettled.contains(instance)
                || answeredSince.getOrDefault(instance, Long.MIN_VALUE) < unsettledSince;
        if (unreadable != null) {
            explained = claims.stream().anyMatch(c -> planted.contains(name(c)));
        } else if (timedOut(error)) {
            // A busy machine's: allowed; the breaker may stay open for its period after it, and
            // the reply that comes too late may leave the connection out of step.
            explained = true;
            unsettled.add(instance);
            stale.put(instance, STALE_CONNECTIONS);
        } else if (!explained && lostConnection(error) && stale.getOrDefault(instance, 0) > 0) {
            // A connection a fault broke, idle in the pool since: it fails once, when taken.
            explained = true;
            stale.merge(instance, -1, Integer::sum);
        }
        if (explained) {
            if (!refused) {
                // A failure opens the breaker's period for this instance: its refusals are explained.
                instanceUntil.merge(instance, real + breakerOpenMillis + GRACE_MILLIS, Math::max);
            }
            return;
        }
        Claim first = claims.isEmpty() ? null : claims.get(0);
        violations.add(new Violation(INVARIANT, kind + " on instance " + instance + " failed with no fault to "
                + "explain it: " + error, op, Invariants.STORE, first == null ? "-" : first.rule().name(),
                first == null ? "-" : first.key(), at, at));
    }

    private void staleEverywhere() {
        for (int i = 0; i < instances; i++) {
            stale.put(i, STALE_CONNECTIONS);
        }
    }

    private static boolean lostConnection(String error) {
        return error.contains("Unexpected end of stream") || error.contains("Connection reset")
                || error.contains("Broken pipe");
    }

    private static String name(Claim claim) {
        return claim.rule().name() + "/" + claim.key();
    }

    /**
     * The failures a busy machine makes alone: a read or connect that timed out, a pool that had
     * no connection free within its wait, a cluster call out of its retry time.
     */
    private static boolean timedOut(String error) {
        return error.contains("SocketTimeoutException") || error.contains("timed out") || error.contains("Read timed")
                || error.contains("Could not get a resource from the pool") || error.contains("Timeout waiting for idle")
                || error.contains("Pool exhausted") || error.contains("retry deadline exceeded")
                || error.contains("No more cluster attempts left");
    }
}
