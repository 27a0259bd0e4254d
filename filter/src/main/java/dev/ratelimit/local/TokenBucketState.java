package dev.ratelimit.local;

import dev.ratelimit.Rule;

/**
 * The in-process twin of {@code token-bucket.lua}: tokens held multiplied by the window, so
 * refilling {@code limit} tokens per window adds exactly {@code limit} units per ms.
 */
final class TokenBucketState implements KeyState {

    private boolean stored;
    private long units;
    private long updatedAt;
    private long expiresAt = Long.MIN_VALUE;

    @Override
    public Outcome take(long now, Rule rule, long cost, boolean consumeIfAllowed, boolean consumeIfRejected) {
        long window = rule.window().toMillis();
        long limit = rule.limit();
        long capacity = rule.burst() * window;
        long need = cost * window;

        long available = capacity;
        if (stored && now < expiresAt) {
            long elapsed = Math.max(0, now - updatedAt);
            // elapsed × limit may overflow for a very old state; anything past the gap is full.
            long gap = capacity - units;
            available = elapsed >= KeyState.ceilDiv(gap, limit) ? capacity : units + elapsed * limit;
        }

        boolean allowed = available >= need;
        if (allowed ? consumeIfAllowed : consumeIfRejected) {
            available = Math.max(available - need, -capacity);
            stored = true;
            units = available;
            updatedAt = now;
            expiresAt = now + KeyState.ceilDiv(capacity - available, limit);
        }

        long remaining = available > 0 ? available / window : 0;
        long resetAfter = KeyState.ceilDiv(capacity - available, limit);
        long retryAfter = allowed ? 0 : KeyState.ceilDiv(need - available, limit);
        return new Outcome(allowed, remaining, resetAfter, retryAfter);
    }

    @Override
    public long expiresAt() {
        return expiresAt;
    }
}
