package dev.ratelimit.local;

import dev.ratelimit.Rule;

/**
 * The in-process twin of {@code sliding-window-counter.lua}: the current and previous window
 * counts; the estimate {@code cur + prev × (window − elapsed) / window} is computed multiplied
 * by the window so it stays exact.
 */
final class SlidingWindowCounterState implements KeyState {

    private long start = Long.MIN_VALUE;
    private long current;
    private long previous;
    private long expiresAt = Long.MIN_VALUE;

    @Override
    public Outcome take(long now, Rule rule, long cost, boolean consumeIfAllowed, boolean consumeIfRejected) {
        long window = rule.window().toMillis();
        long limit = rule.limit();
        long windowStart = now - Math.floorMod(now, window);
        long elapsed = now - windowStart;

        long cur = 0;
        long prev = 0;
        if (start == windowStart) {
            cur = current;
            prev = previous;
        } else if (start == windowStart - window) {
            prev = current;
        }

        long prevWeight = prev * (window - elapsed);
        boolean allowed = (cur + cost) * window + prevWeight <= limit * window;
        if (allowed ? consumeIfAllowed : consumeIfRejected) {
            // A counted rejection fills the window but never overfills it (see the Lua file).
            cur = Math.min(cur + cost, Math.max(limit, cur));
            start = windowStart;
            current = cur;
            previous = prev;
            expiresAt = now + 2 * window - elapsed;
        }

        long used = cur * window + prevWeight;
        long remaining = used < limit * window ? (limit * window - used) / window : 0;
        long resetAfter = cur > 0 ? 2 * window - elapsed : prev > 0 ? window - elapsed : 0;

        long retryAfter = 0;
        if (!allowed) {
            long room = (limit - cost - cur) * window;
            long at = window;
            if (room >= 0 && prev > 0) {
                at = window - room / prev;
            }
            if (at < window) {
                retryAfter = at - elapsed;
            } else {
                long nextAt = cur > 0 ? Math.max(0, window - (limit - cost) * window / cur) : 0;
                retryAfter = (window - elapsed) + nextAt;
            }
        }
        return new Outcome(allowed, remaining, resetAfter, retryAfter);
    }

    @Override
    public long expiresAt() {
        return expiresAt;
    }
}
