package dev.ratelimit.local;

import dev.ratelimit.internal.Charges;

import dev.ratelimit.Rule;
import dev.ratelimit.internal.Undo;
import dev.ratelimit.internal.Verdicts;

/**
 * The in-process twin of {@code sliding-window-counter.lua}: the count of the window starting
 * at {@code start} (its last unit at {@code lastAt}), the previous window's count, and when the
 * state is forgotten. The estimate {@code cur + prev × (window − elapsed) / window} is computed
 * multiplied by the window so it stays exact. The current count's generation is the call that
 * started it: a write keeps it only when it adds to that count whole, in the same window, so a
 * refund finds its units only in a count of its own generation.
 */
final class SlidingWindowCounterState implements KeyState {

    private long start;
    private long lastAt;
    private long current;
    private long previous;
    private long expiresAt = Long.MIN_VALUE;
    private long generation;

    /**
     * The time until {@code c} units fit, for counts that do not let them in now
     * ({@code c <= limit}): the estimate {@code cur + prev × (window − e) / window} must fall to
     * {@code limit − c} (see the Lua file's {@code wait_for}).
     */
    private static long waitFor(long c, long cur, long prev, long elapsed, long window, long limit) {
        // Inside this window the previous count's weight must fall to `room`.
        long room = (limit - c - cur) * window;
        long at = window;
        if (room >= 0 && prev > 0) {
            at = window - room / prev;
        }
        if (at < window) {
            return at - elapsed;
        }
        // Otherwise in the next window, where this window's count is the previous one.
        long nextAt = cur > 0 ? Math.max(0, window - (limit - c) * window / cur) : 0;
        return (window - elapsed) + nextAt;
    }

    @Override
    public Verdicts.Answer take(long now, Rule rule, long cost, boolean consumeIfAllowed, boolean consumeIfRejected,
                        long call) {
        long window = rule.window().toMillis();
        long limit = rule.limit();
        long windowStart = now - Math.floorMod(now, window);
        long elapsed = now - windowStart;

        long cur = 0;
        long prev = 0;
        long expires = Long.MIN_VALUE;
        // This window's count, read whole: a write adds to it, in its generation.
        boolean kept = now < expiresAt && start == windowStart && current <= Charges.DEBT_BUCKETS * limit;
        if (now < expiresAt) {
            // Each count goes to the window its latest unit could fall in (see the Lua file).
            expires = expiresAt;
            if (lastAt >= windowStart) {
                cur += current;
            } else if (lastAt >= windowStart - window) {
                prev += current;
            }
            if (start > windowStart) {
                cur += previous;
            } else if (start > windowStart - window) {
                prev += previous;
            }
            // Counts above the limit weigh as counted, up to the debt bound (see the Lua file).
            cur = Math.min(cur, Charges.DEBT_BUCKETS * limit);
            prev = Math.min(prev, Charges.DEBT_BUCKETS * limit);
        }

        long prevWeight = prev * (window - elapsed);
        boolean allowed = (cur + cost) * window + prevWeight <= limit * window;
        boolean consume = allowed ? consumeIfAllowed : consumeIfRejected;
        if (consume) {
            // A counted rejection fills the window but never overfills it (see the Lua file).
            cur = Math.min(cur + cost, Math.max(limit, cur));
            start = windowStart;
            lastAt = now;
            current = cur;
            previous = prev;
            expiresAt = windowStart + 2 * window;
            expires = expiresAt;
            generation = kept ? generation : call;
        }

        long used = cur * window + prevWeight;
        long remaining = used < limit * window ? (limit * window - used) / window : 0;
        long resetAfter = cur > 0 ? 2 * window - elapsed : prev > 0 ? window - elapsed : 0;

        // Taken now, the remaining units weigh less once this window ends: more comes when one
        // fits beside all of them (see the Lua file).
        long next = remaining < limit ? waitFor(1, cur + remaining, prev, elapsed, window, limit) : 0;
        long wait = (cur + cost) * window + prevWeight > limit * window
                ? waitFor(cost, cur, prev, elapsed, window, limit) : 0;
        if (expires != Long.MIN_VALUE) {
            resetAfter = Math.min(resetAfter, expires - now);
            next = Math.min(next, expires - now);
            wait = Math.min(wait, expires - now);
        }
        return new Verdicts.Answer(allowed, remaining, resetAfter, next, wait, Undo.of(consume, windowStart, generation));
    }

    @Override
    public boolean refund(long now, Rule rule, long cost, Verdicts.Answer taken) {
        Undo undo = taken.undo();
        long chargedStart = undo.where();
        long chargedGeneration = undo.which();
        // A window that has rolled over is left alone, and a count started since (see the Lua file).
        if (start != chargedStart || generation != chargedGeneration || now >= start + rule.window().toMillis()
                || now >= expiresAt) {
            return false;
        }
        current = Math.max(0, current - cost);
        return true;
    }

    @Override
    public long expiresAt() {
        return expiresAt;
    }
}
