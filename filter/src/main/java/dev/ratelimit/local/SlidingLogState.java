package dev.ratelimit.local;

import dev.ratelimit.Rule;
import dev.ratelimit.internal.Undo;
import dev.ratelimit.internal.Verdicts;

import java.util.ArrayDeque;

/**
 * The in-process twin of {@code sliding-log.lua}: the times of the newest units taken, at
 * most {@code limit} of them (older ones can never decide anything), each with the window of
 * the rule that took it. The whole log is forgotten at its newest entry's time plus window.
 */
final class SlidingLogState implements KeyState {

    /**
     * One unit taken: when, under which window, its sequence number within its millisecond
     * (the Lua member's {@code seq}, for the order of one millisecond's entries) and the call
     * that took it, so that a refund removes exactly the units it took: the sequence restarts
     * once a millisecond's entries are gone (a reset), the call's number never does.
     */
    private record Entry(long time, long window, long seq, long call) {
    }

    /** Oldest first; entries of one millisecond in the order they were taken. */
    private final ArrayDeque<Entry> entries = new ArrayDeque<>();

    /**
     * The time until {@code c} units fit beside the {@code count} entries in the window: the
     * last of the {@code count + c - limit} entries that must leave is the k-th oldest, and it
     * leaves at its time + window (never past the moment the state is forgotten).
     */
    private long waitFor(long c, long count, long limit, long since, long window, long expires, long now) {
        long k = count + c - limit;
        long kth = 0;
        long seen = 0;
        for (Entry e : entries) {
            if (e.time() > since && ++seen == k) {
                kth = e.time();
                break;
            }
        }
        return Math.min(Math.max(1, kth + window - now), expires - now);
    }

    @Override
    public Verdicts.Answer take(long now, Rule rule, long cost, boolean consumeIfAllowed, boolean consumeIfRejected,
                        long call) {
        long window = rule.window().toMillis();
        long since = now - window;
        long expires = expiresAt();
        boolean live = now < expires;
        long count = live ? entries.stream().filter(e -> e.time() > since).count() : 0;

        boolean allowed = count + cost <= rule.limit();
        boolean consume = allowed ? consumeIfAllowed : consumeIfRejected;
        long firstSeq = 0;
        if (consume) {
            if (live) {
                entries.removeIf(e -> e.time() <= since);
            } else {
                entries.clear();
            }
            // Continue the sequence of this millisecond after its highest entry, as the Lua file does.
            firstSeq = 0;
            for (Entry e : entries) {
                if (e.time() == now) {
                    firstSeq = Math.max(firstSeq, e.seq() + 1);
                }
            }
            for (long i = 0; i < cost; i++) {
                insertSorted(new Entry(now, window, firstSeq + i, call));
            }
            while (entries.size() > rule.limit()) {
                entries.pollFirst();
            }
            count = entries.size();
            expires = expiresAt();
        }

        long resetAfter = 0;
        if (count > 0) {
            long newest = Long.MIN_VALUE;
            for (Entry e : entries) {
                if (e.time() > since) {
                    newest = Math.max(newest, e.time());
                }
            }
            resetAfter = Math.min(newest + window - now, expires - now);
        }

        long remaining = Math.max(0, rule.limit() - count);
        long next = count > 0 ? waitFor(remaining + 1, count, rule.limit(), since, window, expires, now) : 0;
        long wait = count + cost > rule.limit() ? waitFor(cost, count, rule.limit(), since, window, expires, now) : 0;
        return new Verdicts.Answer(allowed, remaining, resetAfter, next, wait, Undo.of(consume, now, call));
    }

    /**
     * Removes exactly the entries a take added, those still there (the oldest may have been
     * trimmed), if they are still in the window of the rule that took them; gives back only then.
     */
    @Override
    public boolean refund(long now, Rule rule, long cost, Verdicts.Answer taken) {
        Undo undo = taken.undo();
        long takenAt = undo.where();
        long call = undo.which();
        long window = rule.window().toMillis();
        // Units that left their own window give nothing back and stay: a rule edited to a longer
        // window may still count them, and removing them would make room no one was told of.
        if (takenAt <= now - window) {
            return false;
        }
        // At most cost of them: a settlement by actual cost gives back part of what a call took.
        long[] left = {cost};
        return entries.removeIf(e -> left[0] > 0 && e.time() == takenAt && e.window() == window && e.call() == call
                && left[0]-- > 0);
    }

    /** Keeps the log ordered by time even if the clock stepped back, as the sorted set does. */
    private void insertSorted(Entry entry) {
        if (entries.isEmpty() || entries.peekLast().time() <= entry.time()) {
            entries.addLast(entry);
            return;
        }
        ArrayDeque<Entry> later = new ArrayDeque<>();
        while (!entries.isEmpty() && entries.peekLast().time() > entry.time()) {
            later.addFirst(entries.pollLast());
        }
        entries.addLast(entry);
        entries.addAll(later);
    }

    /** The newest entry's time plus its window: when the whole log stops mattering. */
    @Override
    public long expiresAt() {
        Entry newest = entries.peekLast();
        return newest == null ? Long.MIN_VALUE : newest.time() + newest.window();
    }

    /** For tests of the memory bound. */
    int size() {
        return entries.size();
    }
}
