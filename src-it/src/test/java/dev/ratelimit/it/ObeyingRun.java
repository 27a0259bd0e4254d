package dev.ratelimit.it;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.IntStream;

/**
 * What one obeying client saw, and the figures the test judges.
 *
 * <p><b>The rate.</b> The client starts with a full quota, which it spends at once: that initial
 * burst is not counted, as a long-run rate does not include it. The measured interval runs from
 * the first request sent after a wait (the first "wake": a wait for {@code t} after {@code r=0},
 * or for {@code Retry-After}) to the last wake, the first one after the span; the units counted
 * are the allowed requests sent in between, the last wake's own excluded. So whole cycles of
 * "wait, then spend what is available" are measured, against the elapsed time the client actually
 * observed: a client the machine delays only lowers its own rate by its delay, and where the span
 * ended inside a wait does not matter.
 *
 * @param rule      the rule's name
 * @param exchanges every request, in order
 * @param complete  whether a wake after the span was reached (else the last wait was longer than
 *                  the run allowed)
 */
record ObeyingRun(String rule, List<Exchange> exchanges, boolean complete) {

    /**
     * One request.
     *
     * @param sentNanos     when it was sent, from the run's start
     * @param receivedNanos when its response was in, from the run's start
     * @param status        the response's status
     * @param fields        what the response said
     * @param afterWait     whether the client waited before sending it (it is a wake)
     */
    record Exchange(long sentNanos, long receivedNanos, int status, ObeyedFields fields, boolean afterWait) {
    }

    /** The 429s the client got. */
    long tooMany() {
        return exchanges.stream().filter(e -> e.status() == 429).count();
    }

    /** Allowed requests before the first wake: the initial burst, not counted in the rate. */
    long initialBurst() {
        int first = firstWake();
        return exchanges.subList(0, first < 0 ? exchanges.size() : first).stream().filter(e -> e.status() == 200).count();
    }

    /** How often each {@code t} was seen on an allowed response with {@code r=0}, in seconds. */
    Map<Long, Integer> resetsAtExhaustion() {
        Map<Long, Integer> seen = new TreeMap<>();
        exchanges.stream().filter(e -> e.status() == 200 && e.fields().remaining() == 0)
                .forEach(e -> seen.merge(e.fields().reset(), 1, Integer::sum));
        return seen;
    }

    /** Allowed requests in the measured interval. */
    long measuredUnits() {
        int first = firstWake();
        int last = lastWake();
        return first < 0 || last <= first ? 0
                : exchanges.subList(first, last).stream().filter(e -> e.status() == 200).count();
    }

    /** The measured interval's length as the client observed it (zero without two wakes). */
    Duration measuredTime() {
        int first = firstWake();
        int last = lastWake();
        return first < 0 || last <= first ? Duration.ZERO
                : Duration.ofNanos(exchanges.get(last).sentNanos() - exchanges.get(first).sentNanos());
    }

    /**
     * The measured rate as a fraction of the rule's long-run rate, {@code limit / window}.
     *
     * @return the fraction, 0 when the interval is empty
     */
    double rateFraction(long limit, Duration window) {
        long nanos = measuredTime().toNanos();
        if (nanos == 0) {
            return 0;
        }
        return measuredUnits() / (nanos / 1e9 * limit / (window.toNanos() / 1e9));
    }

    /** The run's wall time, from its start to its last response. */
    Duration wallTime() {
        return Duration.ofNanos(exchanges.get(exchanges.size() - 1).receivedNanos());
    }

    private int firstWake() {
        return IntStream.range(0, exchanges.size()).filter(i -> exchanges.get(i).afterWait()).findFirst().orElse(-1);
    }

    private int lastWake() {
        return IntStream.range(0, exchanges.size()).map(i -> exchanges.size() - 1 - i)
                .filter(i -> exchanges.get(i).afterWait()).findFirst().orElse(-1);
    }
}
