package dev.ratelimit;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * The five rate-limiting algorithms and the in-flight limit, each with the id used in
 * configuration.
 *
 * <p>Every algorithm answers the same questions (allowed, remaining, reset-after,
 * retry-after) with the meaning given on {@link Decision}; they differ in what they remember
 * and so in how exact they are at window edges. For {@link #CONCURRENCY} the times are those
 * of the permits' timeouts: an upper bound, since permits are usually released sooner.
 *
 * <p>A 1.x release may add algorithms: a {@code switch} over them wants a {@code default}.
 */
public enum Algorithm {
    /**
     * One counter per window aligned to the clock. Cheapest; lets up to twice the limit
     * through across a window boundary.
     */
    FIXED_WINDOW("fixed-window"),
    /**
     * A log of request times: exact, memory proportional to the limit. For low limits on
     * sensitive actions (login, password reset, one-time codes).
     */
    SLIDING_LOG("sliding-log"),
    /**
     * Current and previous window counts, the previous one weighted by its overlap with the
     * sliding window: an approximation in two counters.
     */
    SLIDING_WINDOW_COUNTER("sliding-window-counter"),
    /**
     * A bucket of {@code burst} tokens refilled at {@code limit} per window: steady rate
     * with bursts, for APIs.
     */
    TOKEN_BUCKET("token-bucket"),
    /**
     * The generic cell rate algorithm: the token bucket's model kept in one timestamp.
     */
    GCRA("gcra"),
    /**
     * At most {@code limit} units in progress at once, not per window: each unit is a lease,
     * taken before the work and released after it ({@link Reservation}). The rule's
     * {@code window} is the lease timeout: a lease its holder never released (a process that
     * died mid-request) expires then and its unit comes back.
     */
    CONCURRENCY("concurrency");

    private final String id;

    Algorithm(String id) {
        this.id = id;
    }

    /**
     * The id used in configuration and in the Valkey script, e.g. {@code "token-bucket"}.
     *
     * @return the algorithm's id
     */
    public String id() {
        return id;
    }

    /**
     * Whether the algorithm has a burst (bucket capacity) separate from its limit.
     *
     * @return true for {@link #TOKEN_BUCKET} and {@link #GCRA}
     */
    public boolean hasBurst() {
        return this == TOKEN_BUCKET || this == GCRA;
    }

    /**
     * Whether the algorithm limits units in progress (leases) rather than units per window.
     *
     * @return true for {@link #CONCURRENCY}
     */
    public boolean isConcurrency() {
        return this == CONCURRENCY;
    }

    /**
     * The algorithm with the given id.
     *
     * @param id an id such as {@code "sliding-log"}
     * @return the algorithm
     * @throws IllegalArgumentException naming the value and the accepted ids when none matches
     */
    public static Algorithm fromId(String id) {
        for (Algorithm algorithm : values()) {
            if (algorithm.id.equals(id)) {
                return algorithm;
            }
        }
        throw new IllegalArgumentException("unknown algorithm '" + id + "': expected one of "
                + Arrays.stream(values()).map(Algorithm::id).collect(Collectors.joining(", ")));
    }

    @Override
    public String toString() {
        return id;
    }
}
