package dev.ratelimit.servlet;

import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Remembers, for a while, which rule and key were just rejected: until the announced
 * retry-after has passed, a further request for them is rejected here, with no call to Valkey.
 * A client hammering a limit then costs the store nothing.
 *
 * <p>Bounded: at most {@code maxEntries} entries. When full, expired entries are swept (at
 * most once per 100 ms, so a flood of new keys cannot make every insert a full scan) and, if it
 * is still full, new rejections are simply not cached: the cache only saves work, it never
 * decides anything the store would not.
 */
final class DenyCache {

    private static final long SWEEP_INTERVAL_NANOS = 100_000_000L;

    private final int maxEntries;
    private final Map<Entry, Long> deniedUntil = new ConcurrentHashMap<>();
    private final AtomicLong lastSweep = new AtomicLong(System.nanoTime() - SWEEP_INTERVAL_NANOS);

    private record Entry(String rule, String key) {
    }

    DenyCache(int maxEntries) {
        this.maxEntries = maxEntries;
    }

    /**
     * How long the rule and key are still denied.
     *
     * @param rule   the rule's name
     * @param key    the key
     * @param nowMs  the time in ms
     * @return the ms left, or 0 when not denied
     */
    long remainingMillis(String rule, String key, long nowMs) {
        Long until = deniedUntil.get(new Entry(rule, key));
        if (until == null) {
            return 0;
        }
        if (until <= nowMs) {
            deniedUntil.remove(new Entry(rule, key), until);
            return 0;
        }
        return until - nowMs;
    }

    /**
     * Remembers a rejection.
     *
     * @param rule    the rule's name
     * @param key     the key
     * @param untilMs when requests may be allowed again
     * @param nowMs   the time in ms, the same clock as {@code untilMs}
     */
    void deny(String rule, String key, long untilMs, long nowMs) {
        if (deniedUntil.size() >= maxEntries && !sweep(nowMs)) {
            return;
        }
        deniedUntil.put(new Entry(rule, key), untilMs);
    }

    /** Drops expired entries; true when there is room afterwards. */
    private boolean sweep(long nowMs) {
        long now = System.nanoTime();
        long last = lastSweep.get();
        if (now - last >= SWEEP_INTERVAL_NANOS && lastSweep.compareAndSet(last, now)) {
            for (Iterator<Long> it = deniedUntil.values().iterator(); it.hasNext(); ) {
                if (it.next() <= nowMs) {
                    it.remove();
                }
            }
        }
        return deniedUntil.size() < maxEntries;
    }

    int size() {
        return deniedUntil.size();
    }
}
