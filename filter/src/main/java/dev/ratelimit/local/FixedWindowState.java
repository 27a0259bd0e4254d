package dev.ratelimit.local;

import dev.ratelimit.Rule;

/**
 * The in-process twin of {@code fixed-window.lua}: the units counted in the window that ends
 * at {@code ends}; they weigh until then, whatever the rule's window is now.
 */
final class FixedWindowState implements KeyState {

    private long ends = Long.MIN_VALUE;
    private long count;

    @Override
    public Outcome take(long now, Rule rule, long cost, boolean consumeIfAllowed, boolean consumeIfRejected) {
        long window = rule.window().toMillis();
        long start = now - Math.floorMod(now, window);
        long current = 0;
        long end = 0;
        if (now < ends) {
            current = count;
            end = ends;
        }

        boolean allowed = current + cost <= rule.limit();
        if (allowed ? consumeIfAllowed : consumeIfRejected) {
            current += cost;
            end = start + window;
            count = current;
            ends = end;
        }
        long resetAfter = current > 0 ? end - now : 0;
        long wait = current + cost > rule.limit() ? end - now : 0;
        return new Outcome(allowed, Math.max(0, rule.limit() - current), resetAfter, wait);
    }

    @Override
    public long expiresAt() {
        return ends;
    }
}
