package dev.ratelimit.it.checker;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The circuit breaker's promise, from the README ("it opens after repeated failures ... then
 * for open-for every call is refused at once ... then exactly one call goes through as a
 * probe: success closes the breaker, failure opens it again; never two calls in one open
 * period"), checked per limiter instance (each has its own breaker) against the commands its
 * client sent ({@link Event.Wire}) and the calls it refused ({@link Event.StoreCall#refused()}):
 *
 * <ul>
 *   <li><b>it closes again</b>: a call is refused only while open-for has not passed since a
 *       failure, or while a probe is out. A refusal that began more than open-for after the
 *       last failure could have been reported, with no command out meanwhile, is a breaker
 *       that stays open for good (a probe never reported);</li>
 *   <li><b>one probe at a time</b>: two commands let through while the breaker was open, and
 *       certainly on the wire at the same time, are two probes out at once.</li>
 * </ul>
 *
 * <p>Every bound is real time measured outside the breaker and only ever in its favour: a
 * failure is counted from the latest moment it can have been reported (when the call that made
 * it returned), a command is a probe only if a refusal returned before its call began and no
 * answer that may have closed the breaker came between, and two commands are out at once only
 * if each was sent before the other returned (ms rounding counted against the check). A busy
 * machine makes them weaker, never wrong. Only histories whose clients record their commands
 * (a single Valkey, the checker's own client) are checked.
 */
final class BreakerInvariants {

    /**
     * What one command of an instance's client did, when the call it was sent for began (its
     * permit was asked for no earlier) and when it returned (the breaker heard of the command
     * by then).
     */
    private record Sent(Event.Wire wire, long reportedBy, long callBegan) {
        boolean failed() {
            return wire.error() != null;
        }

        /** An answer, or a script's error (which the breaker counts as an answer). */
        boolean mayHaveSucceeded() {
            return wire.error() == null || wire.error().startsWith("JedisDataException");
        }
    }

    private BreakerInvariants() {
    }

    /**
     * The violations of the breaker's promises in a history.
     *
     * @param events the history
     * @return what broke
     */
    static List<Violation> check(List<Event> events) {
        // The clients connect while the limiters are built, before the history's first line.
        Event.Start start = (Event.Start) events.stream().filter(e -> e instanceof Event.Start).findFirst().orElse(null);
        if (start == null || !Boolean.TRUE.equals(start.options().get("wires"))) {
            return List.of();
        }
        long openFor = ((Number) start.options().get("breakerOpenMs")).longValue();
        Map<Integer, List<Sent>> sent = new HashMap<>();
        Map<Integer, List<Event.StoreCall>> refused = new HashMap<>();
        List<Event.Wire> waiting = new ArrayList<>();
        for (Event event : events) {
            if (event instanceof Event.Wire wire) {
                waiting.add(wire);
            } else if (event instanceof Event.StoreCall || event instanceof Event.StoreRefund) {
                // The call the commands of this operation were sent for has returned: the
                // breaker heard of each by now.
                for (Event.Wire wire : waiting) {
                    if (wire.op() == event.op()) {
                        // A refund is sent only by the runner's own thread, one call at a time:
                        // its command's sending is as early as its call's permit can be.
                        long began = event instanceof Event.StoreCall call ? call.began() : wire.began();
                        sent.computeIfAbsent(wire.instance(), i -> new ArrayList<>())
                                .add(new Sent(wire, event.real(), began));
                    }
                }
                waiting.removeIf(wire -> wire.op() == event.op());
                if (event instanceof Event.StoreCall call && call.refused()) {
                    refused.computeIfAbsent(call.instance(), i -> new ArrayList<>()).add(call);
                }
            }
        }
        List<Violation> violations = new ArrayList<>();
        for (Map.Entry<Integer, List<Event.StoreCall>> entry : refused.entrySet()) {
            List<Sent> commands = sent.getOrDefault(entry.getKey(), List.of());
            for (Event.StoreCall refusal : entry.getValue()) {
                Violation stuck = stuckOpen(refusal, commands, openFor, entry.getKey());
                if (stuck != null) {
                    violations.add(stuck);
                    break; // one is enough: the next refusals say the same
                }
            }
            Violation two = twoProbes(entry.getValue(), commands, entry.getKey());
            if (two != null) {
                violations.add(two);
            }
        }
        return violations;
    }

    /** A refusal that no failure within open-for, and no command out, explains. */
    private static Violation stuckOpen(Event.StoreCall refusal, List<Sent> commands, long openFor, int instance) {
        long lastFailure = Long.MIN_VALUE;
        for (Sent command : commands) {
            if (command.callBegan() > refusal.real()) {
                continue; // its call began after the refusal returned
            }
            if (command.reportedBy() >= refusal.began()) {
                return null; // out while the call was refused: it may be the probe
            }
            if (command.failed()) {
                lastFailure = Math.max(lastFailure, command.reportedBy());
            }
        }
        if (lastFailure == Long.MIN_VALUE || lastFailure + openFor + 2 >= refusal.began()) {
            return null;
        }
        return new Violation("the circuit breaker lets a probe through once open-for has passed",
                "instance " + instance + " refused a call (op " + refusal.op() + ") that began at real "
                        + refusal.began() + " ms, " + (refusal.began() - lastFailure) + " ms after the last failure "
                        + "could have been reported (real " + lastFailure + " ms), with open-for " + openFor
                        + " ms and no command out: a probe never reported keeps it open for good",
                refusal.op(), "breaker#" + instance, "-", "-", refusal.at(), refusal.at());
    }

    /** Two commands let through while open, on the wire at the same time. */
    private static Violation twoProbes(List<Event.StoreCall> refusals, List<Sent> commands, int instance) {
        List<Sent> probes = new ArrayList<>();
        for (Sent command : commands) {
            if (isProbe(command, refusals, commands)) {
                probes.add(command);
            }
        }
        for (int i = 0; i < probes.size(); i++) {
            for (int j = i + 1; j < probes.size(); j++) {
                Event.Wire a = probes.get(i).wire();
                Event.Wire b = probes.get(j).wire();
                if (a.op() != b.op() && Math.max(a.began(), b.began()) + 1 <= Math.min(a.real(), b.real())) {
                    return new Violation("the circuit breaker lets one probe out at a time",
                            "instance " + instance + ": ops " + a.op() + " and " + b.op() + " were both let through "
                                    + "while the breaker was open (after a refusal, with no answer since), and were "
                                    + "on the wire together: real " + a.began() + "-" + a.real() + " ms and "
                                    + b.began() + "-" + b.real() + " ms",
                            b.op(), "breaker#" + instance, "-", "-", b.at(), b.at());
                }
            }
        }
        return null;
    }

    /**
     * Whether the command was certainly let through while the breaker was open: a refusal
     * returned before its call began, and no command that may have succeeded (closing it) was
     * reported after that refusal began and sent before this one. The latest such refusal is
     * the one to ask: an answer that closed the breaker after an earlier one did after it too.
     */
    private static boolean isProbe(Sent command, List<Event.StoreCall> refusals, List<Sent> commands) {
        Event.StoreCall latest = null;
        for (Event.StoreCall refusal : refusals) {
            if (refusal.real() + 1 <= command.callBegan() && (latest == null || refusal.began() > latest.began())) {
                latest = refusal;
            }
        }
        if (latest == null) {
            return false;
        }
        for (Sent other : commands) {
            if (other != command && other.mayHaveSucceeded() && other.wire().began() <= command.wire().began()
                    && other.reportedBy() >= latest.began()) {
                return false;
            }
        }
        return true;
    }
}
