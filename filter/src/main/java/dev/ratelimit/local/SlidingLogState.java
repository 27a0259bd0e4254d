package dev.ratelimit.local;

import dev.ratelimit.Rule;

import java.util.ArrayDeque;

/**
 * The in-process twin of {@code sliding-log.lua}: the times of the newest units taken, at
 * most {@code limit} of them (older ones can never decide anything).
 */
final class SlidingLogState implements KeyState {

    /** Times in ms, oldest first; one entry per unit taken. */
    private final ArrayDeque<Long> entries = new ArrayDeque<>();
    private long expiresAt = Long.MIN_VALUE;

    @Override
    public Outcome take(long now, Rule rule, long cost, boolean consumeIfAllowed, boolean consumeIfRejected) {
        long window = rule.window().toMillis();
        long since = now - window;
        long count = entries.stream().filter(t -> t > since).count();

        boolean allowed = count + cost <= rule.limit();
        if (allowed ? consumeIfAllowed : consumeIfRejected) {
            entries.removeIf(t -> t <= since);
            // Keep insertion ordered by time even if the clock stepped back, as the sorted set does.
            for (long i = 0; i < cost; i++) {
                insertSorted(now);
            }
            while (entries.size() > rule.limit()) {
                entries.pollFirst();
            }
            count = entries.size();
        }

        long newest = Long.MIN_VALUE;
        for (long t : entries) {
            if (t > since) {
                newest = Math.max(newest, t);
            }
        }
        long resetAfter = count > 0 ? newest + window - now : 0;
        if (consumeIfAllowed || consumeIfRejected) {
            expiresAt = now + resetAfter;
        }

        long retryAfter = 0;
        if (!allowed) {
            long k = count + cost - rule.limit();
            long kth = 0;
            long seen = 0;
            for (long t : entries) {
                if (t > since && ++seen == k) {
                    kth = t;
                    break;
                }
            }
            retryAfter = Math.max(1, kth + window - now);
        }
        return new Outcome(allowed, Math.max(0, rule.limit() - count), resetAfter, retryAfter);
    }

    private void insertSorted(long time) {
        if (entries.isEmpty() || entries.peekLast() <= time) {
            entries.addLast(time);
            return;
        }
        ArrayDeque<Long> later = new ArrayDeque<>();
        while (!entries.isEmpty() && entries.peekLast() > time) {
            later.addFirst(entries.pollLast());
        }
        entries.addLast(time);
        entries.addAll(later);
    }

    @Override
    public long expiresAt() {
        return expiresAt;
    }

    /** For tests of the memory bound. */
    int size() {
        return entries.size();
    }
}
