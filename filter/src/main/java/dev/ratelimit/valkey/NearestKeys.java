package dev.ratelimit.valkey;

import dev.ratelimit.Decision;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The keys nearest their limit among those a scan has looked at, at most {@code top} of them:
 * what a scan holds grows with what it returns, never with the keys of the rule, so a scan of
 * millions of keys runs in the memory of a few. States the rule's algorithm cannot read come
 * first, then rejected before allowed, fewer remaining first, the longest to be full first.
 */
final class NearestKeys {

    private record Entry(String key, Decision decision) {
    }

    private static final Comparator<Entry> NEAREST = Comparator.comparing((Entry e) -> e.decision().allowed())
            .thenComparingLong(e -> e.decision().remaining())
            .thenComparing(e -> e.decision().resetAfter(), Comparator.reverseOrder())
            .thenComparing(Entry::key); // a total order: two keys never collapse into one entry

    private final int top;
    private final TreeSet<Entry> nearest = new TreeSet<>(NEAREST);
    /** The entries held, by key: SCAN may return a key twice, which must not take two places. */
    private final Map<String, Entry> held = new HashMap<>();
    private final List<String> unreadable = new ArrayList<>();
    private int seen;

    /**
     * @param top how many to keep, at least 1
     */
    NearestKeys(int top) {
        if (top < 1) {
            throw new IllegalArgumentException("top must be at least 1, not " + top);
        }
        this.top = top;
    }

    /** A key read: kept if it is among the nearest so far. */
    void add(String key, Decision decision) {
        Entry entry = new Entry(key, decision);
        Entry before = held.put(key, entry);
        if (before != null) {
            nearest.remove(before); // seen again while held: counted once
        } else {
            seen++;
        }
        nearest.add(entry);
        if (nearest.size() > top) {
            held.remove(nearest.pollLast().key());
        }
    }

    /** A key the rule's algorithm cannot read: kept, before all others, while there is room. */
    void addUnreadable(String key) {
        seen++;
        if (unreadable.size() < top && !unreadable.contains(key)) {
            unreadable.add(key);
        }
    }

    /**
     * How many keys were looked at; a key {@code SCAN} returned twice (it may, while the keyspace
     * is rehashed) counts twice unless it was among the nearest both times.
     */
    int seen() {
        return seen;
    }

    /** The nearest keys, nearest first, at most {@code top}. */
    List<String> keys() {
        List<String> keys = new ArrayList<>(unreadable);
        nearest.forEach(e -> keys.add(e.key()));
        return keys.subList(0, Math.min(top, keys.size()));
    }
}
