package dev.ratelimit.internal;

import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.Rule;
import java.util.List;

import java.time.Duration;
import java.util.Optional;
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
public final class DenyCache {

    private static final long SWEEP_INTERVAL_NANOS = 100_000_000L;

    private final int maxEntries;
    private final Map<Entry, Denial> denials = new ConcurrentHashMap<>();
    private final AtomicLong lastSweep = new AtomicLong(System.nanoTime() - SWEEP_INTERVAL_NANOS);

    /**
     * The whole rule, not its name, and the cost: a rejection decided under one limit says
     * nothing of another, nor one of a cost of 8 of a cost of 1. A caller moved to a bigger plan,
     * a limit raised by the application or by a refresh, a smaller request, is asked of the store
     * again rather than turned away for the retry-after of another.
     */
    private record Entry(Rule rule, String key, long cost) {
    }

    /** A rejection: what the store answered, and when. */
    private record Denial(Decision decision, long decidedAt) {
        long until() {
            return decidedAt + decision.retryAfter().toMillis();
        }
    }

    /**
     * A cache of at most {@code maxEntries} rejections.
     *
     * @param maxEntries the bound, at least 1
     */
    public DenyCache(int maxEntries) {
        this.maxEntries = maxEntries;
    }

    /**
     * The store's rejection of the rule and key, as it stands now, if its retry-after has not
     * passed: its times shortened by the time since, so that the response says what the store
     * would say.
     *
     * @param claim  the rule, as the request is decided under it, its key and cost
     * @param nowMs  the time in ms
     * @return the rejection, or empty when not denied
     */
    public Optional<Decision> denied(Claim claim, long nowMs) {
        Entry entry = new Entry(claim.rule(), claim.key(), claim.cost());
        Denial denial = denials.get(entry);
        if (denial == null) {
            return Optional.empty();
        }
        if (denial.until() <= nowMs) {
            denials.remove(entry, denial);
            return Optional.empty();
        }
        long elapsed = Math.max(0, nowMs - denial.decidedAt());
        Decision d = denial.decision();
        return Optional.of(Decision.rejected(d.rule(), d.limit(), d.remaining(),
                Duration.ofMillis(Math.max(0, d.resetAfter().toMillis() - elapsed)),
                Duration.ofMillis(denial.until() - nowMs)));
    }

    /**
     * Remembers a rejection.
     *
     * @param claim    the rule the store decided by, the key and the cost
     * @param decision the store's rejection
     * @param nowMs    when it was decided, in ms
     */
    public void deny(Claim claim, Decision decision, long nowMs) {
        if (denials.size() >= maxEntries && !sweep(nowMs)) {
            return;
        }
        denials.put(new Entry(claim.rule(), claim.key(), claim.cost()), new Denial(decision, nowMs));
    }

    /**
     * A recent rejection of one of the request's enforcing rules, replayed without the store:
     * the remembered rules answer as the store did, the others are not asked (and count
     * nothing). Never for a request that a count-rejected rule must see.
     *
     * @param claims   the request's claims
     * @param now      the time in ms
     * @param listener told of each replayed rejection
     * @return the decisions, or empty when no rule of the request is remembered
     */
    public Optional<Decisions> replay(List<Claim> claims, long now, RateLimitListener listener) {
        if (claims.stream().anyMatch(c -> c.rule().countRejected())) {
            return Optional.empty();
        }
        Decision[] decisions = new Decision[claims.size()];
        boolean any = false;
        for (int i = 0; i < claims.size(); i++) {
            Rule rule = claims.get(i).rule();
            Optional<Decision> denied = rule.shadow() ? Optional.empty()
                    : denied(claims.get(i), now);
            if (denied.isPresent()) {
                decisions[i] = denied.get();
                listener.onEvent(rule.name(), RateLimitListener.Event.REJECTED);
                listener.onEvent(rule.name(), RateLimitListener.Event.DENY_CACHE_HIT);
                any = true;
            } else {
                // Not asked, so nothing counted: the request is rejected by a remembered rule anyway.
                decisions[i] = Decision.skipped(rule.name(), rule.limit());
            }
        }
        return any ? Optional.of(Decisions.of(claims, List.of(decisions))) : Optional.empty();
    }

    /**
     * Forgets the rejections of a rule, for every key, or for one key: when its room may have
     * come back before their retry-after (units given back, a reset). A scan: for rare events.
     *
     * @param rule the rule's name
     * @param key  the key, or null for every key
     */
    public void forget(String rule, String key) {
        denials.keySet().removeIf(entry -> entry.rule().name().equals(rule) && (key == null || entry.key().equals(key)));
    }

    /** Drops expired entries; true when there is room afterwards. */
    private boolean sweep(long nowMs) {
        long now = System.nanoTime();
        long last = lastSweep.get();
        if (now - last >= SWEEP_INTERVAL_NANOS && lastSweep.compareAndSet(last, now)) {
            for (Iterator<Denial> it = denials.values().iterator(); it.hasNext(); ) {
                if (it.next().until() <= nowMs) {
                    it.remove();
                }
            }
        }
        return denials.size() < maxEntries;
    }

    /**
     * How many rejections are held.
     *
     * @return the count
     */
    public int size() {
        return denials.size();
    }
}
