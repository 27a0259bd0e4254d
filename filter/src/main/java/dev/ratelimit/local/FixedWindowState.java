package dev.ratelimit.local;

import dev.ratelimit.Rule;

/** The in-process twin of {@code fixed-window.lua}: a counter per epoch-aligned window. */
final class FixedWindowState implements KeyState {

    private long start = Long.MIN_VALUE;
    private long count;
    private long expiresAt = Long.MIN_VALUE;

    @Override
    public Outcome take(long now, Rule rule, long cost, boolean consumeIfAllowed, boolean consumeIfRejected) {
        long window = rule.window().toMillis();
        long currentStart = now - Math.floorMod(now, window);
        long endsIn = currentStart + window - now;
        long current = currentStart == start ? count : 0;

        boolean allowed = current + cost <= rule.limit();
        if (allowed ? consumeIfAllowed : consumeIfRejected) {
            current += cost;
            start = currentStart;
            count = current;
            expiresAt = currentStart + window;
        }
        return new Outcome(allowed, Math.max(0, rule.limit() - current), current > 0 ? endsIn : 0,
                allowed ? 0 : endsIn);
    }

    @Override
    public long expiresAt() {
        return expiresAt;
    }
}
