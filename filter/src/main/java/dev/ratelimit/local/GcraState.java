package dev.ratelimit.local;

import dev.ratelimit.Rule;

/**
 * The in-process twin of {@code gcra.lua}: the theoretical arrival time, kept in ticks of
 * {@code 1 / limit} ms so one unit's emission interval is exactly {@code window} ticks.
 */
final class GcraState implements KeyState {

    /** The theoretical arrival time: {@code tatMillis + tatFraction / limit} ms. */
    private long tatMillis = Long.MIN_VALUE;
    private long tatFraction;

    @Override
    public Outcome take(long now, Rule rule, long cost, boolean consumeIfAllowed, boolean consumeIfRejected) {
        long window = rule.window().toMillis();
        long limit = rule.limit();
        long tolerance = rule.burst() * window;
        long need = cost * window;

        long d = 0;
        if (tatMillis > now || (tatMillis == now && tatFraction > 0)) {
            long aheadMillis = tatMillis - now;
            // Held to the largest debt, as in the script: only a clock stepping back gets there.
            d = aheadMillis > 2 * tolerance / limit + 1 ? 2 * tolerance
                    : Math.min(aheadMillis * limit + tatFraction, 2 * tolerance);
        }

        boolean allowed = d + need <= tolerance;
        if (allowed ? consumeIfAllowed : consumeIfRejected) {
            d = Math.min(d + need, 2 * tolerance);
            tatMillis = now + d / limit;
            tatFraction = d % limit;
        }

        long remaining = d < tolerance ? (tolerance - d) / window : 0;
        long resetAfter = KeyState.ceilDiv(d, limit);
        long retryAfter = allowed ? 0 : KeyState.ceilDiv(d + need - tolerance, limit);
        return new Outcome(allowed, remaining, resetAfter, retryAfter);
    }

    @Override
    public long expiresAt() {
        return tatMillis == Long.MIN_VALUE ? Long.MIN_VALUE : tatMillis + (tatFraction > 0 ? 1 : 0);
    }
}
