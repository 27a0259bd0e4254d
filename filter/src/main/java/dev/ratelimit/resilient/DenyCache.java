package dev.ratelimit.resilient;

import dev.ratelimit.internal.Verdicts;
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
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Remembers, for a while, which rule and key were just rejected: until the announced
 * retry-after has passed, but for no longer than a bound (one second by default), a further
 * request for them is rejected here, with no call to Valkey. A client hammering a limit then
 * costs the store one call per bound at most.
 *
 * <p>Bounded: at most {@code maxEntries} entries. When full, expired entries are swept (at
 * most once per 100 ms, so a flood of new keys cannot make every insert a full scan) and, if it
 * is still full, new rejections are simply not cached: the cache only saves work, it never
 * decides anything the store would not.
 *
 * <p>A rejection is replayed only while the state it was decided on is known to be unchanged
 * but for time: its retry-after then still holds exactly. So the cache forgets a rule and key's
 * rejection whenever this process changes that state: the store allowed the rule for the key (a
 * request of another cost, or under an edited rule, took units: a replayed retry-after could be
 * early), units of it are given back or it is reset (room came back: a replay would lock
 * callers out). Why forget rather than recompute: only the store knows the state, and a hit
 * saves a call only while nothing touches the key, which is exactly the hammering client the
 * cache is for. Rules whose units requests reserve are never remembered at all (see
 * {@link #reserving}): other processes give their units back, which this one cannot see.
 *
 * <p>A rejection is on its way for a while (the store's reply, then {@link #deny}) and the key
 * may change meanwhile: a reset or a give-back by another thread, whose {@link #forget} finds
 * nothing to forget yet. So a request takes a {@link #mark()} before asking the store, and a
 * rejection is remembered only if no change of its rule and key was reported since; a change
 * reported while the rejection is being written removes it again.
 */
final class DenyCache {

    private static final long SWEEP_INTERVAL_NANOS = 100_000_000L;
    /** Stripes of {@link #changedAt}: a power of two. */
    private static final int STRIPES = 1024;

    private final int maxEntries;
    /**
     * The longest a rejection is replayed, whatever its retry-after: what other processes do to
     * the key (a give-back, a reset) is seen here within it.
     */
    private final long maxHoldMillis;
    private final Map<Slot, Denial> denials = new ConcurrentHashMap<>();
    private final AtomicLong lastSweep = new AtomicLong(System.nanoTime() - SWEEP_INTERVAL_NANOS);
    /**
     * Rules that requests have reserved: their units may be given back, so a rejection of theirs
     * is never exact, even one met while acquiring, and none is kept.
     */
    private final Set<String> givingBack = ConcurrentHashMap.newKeySet();
    /** Numbers every reported change of a key ({@link #forget}), in order. */
    private final AtomicLong changes = new AtomicLong();
    /**
     * The number of the latest change of the rules and keys of each stripe: a rejection decided
     * after mark m is stale once its stripe's number passes m. Striped, so that changes of
     * other keys (every allowed request is one) rarely keep a rejection from being remembered.
     */
    private final AtomicLongArray changedAt = new AtomicLongArray(STRIPES);

    /** One rejection per rule name and key, the latest: what forgetting a key must reach. */
    private record Slot(String rule, String key) {
        static Slot of(Claim claim) {
            return new Slot(claim.rule().name(), claim.key());
        }
    }

    /**
     * A rejection: what the store answered, and when, for which rule and cost. The whole rule,
     * not its name, and the cost: a rejection decided under one limit says nothing of another,
     * nor one of a cost of 8 of a cost of 1 (which may fit), nor of a cost of 1 of one of 8 (whose
     * wait is longer). A caller moved to a bigger plan, a limit raised by the application or by a
     * refresh, another cost, is asked of the store again rather than turned away for the
     * retry-after of another. Two times, as the store decided somewhere between them (on its own
     * clock): when it was asked, from which the promise of no room ({@code t}, the reset) is
     * counted, so it never lasts longer than the store's; and when it answered, from which the
     * retry-after is counted, so it never ends earlier.
     */
    private record Denial(Rule rule, long cost, Decision decision, long askedAt, long answeredAt, long heldUntil) {
        long until() {
            return answeredAt + decision.retryAfter().toMillis();
        }

        boolean holdsFor(Claim claim) {
            return rule.equals(claim.rule()) && cost == claim.cost();
        }
    }

    /**
     * A cache of at most {@code maxEntries} rejections, each replayed for at most
     * {@code maxHoldMillis}.
     *
     * @param maxEntries    the bound, at least 1
     * @param maxHoldMillis the longest a rejection is replayed, at least 1: the cache sees only
     *                      what this process does to a key, so what another process does (it
     *                      gives units back, it resets the key) is seen within this
     */
    public DenyCache(int maxEntries, long maxHoldMillis) {
        this.maxEntries = maxEntries;
        this.maxHoldMillis = maxHoldMillis;
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
        Slot slot = Slot.of(claim);
        Denial denial = denials.get(slot);
        if (denial == null) {
            return Optional.empty();
        }
        // A clock behind the decision (a wall clock stepped back) cannot say how long it has been
        // held: the hold must not stretch by the step, so the store is asked again.
        if (denial.heldUntil() <= nowMs || nowMs < denial.askedAt()) {
            denials.remove(slot, denial);
            return Optional.empty();
        }
        if (!denial.holdsFor(claim)) {
            return Optional.empty();
        }
        long elapsed = nowMs - denial.askedAt();
        Decision d = denial.decision();
        long left = d.effectiveWindow().toMillis() - elapsed;
        if (left <= 0) {
            // The store's numbers held until then: the next unit may have come since, so what
            // remains is the store's to say again (this cost may still not fit).
            return Optional.empty();
        }
        long retry = denial.until() - nowMs;
        long window = Math.min(left, retry);
        return Optional.of(Verdicts.rejected(d.ruleName(), d.limit(), d.remaining(),
                Duration.ofMillis(Math.max(0, d.resetAfter().toMillis() - elapsed)),
                Duration.ofMillis(retry)).toBuilder().effectiveWindow(Duration.ofMillis(window)).build());
    }

    /**
     * Remembers a rejection.
     *
     * @param claim    the rule the store decided by, the key and the cost
     * @param decision the store's rejection
     * @param nowMs    when it was decided, in ms
     */
    public void deny(Claim claim, Decision decision, long nowMs) {
        deny(claim, decision, nowMs, mark());
    }

    /**
     * Remembers a rejection the store decided after {@code mark}, unless its rule and key
     * changed since: a reset or a give-back that came after the store's answer leaves room the
     * rejection does not know of.
     *
     * @param claim    the rule the store decided by, the key and the cost
     * @param decision the store's rejection
     * @param nowMs    when it was decided, in ms
     * @param mark     {@link #mark()} taken before the store was asked
     */
    public void deny(Claim claim, Decision decision, long nowMs, long mark) {
        deny(claim, decision, nowMs, nowMs, mark);
    }

    /**
     * Remembers a rejection the store decided between {@code askedAt} and {@code answeredAt}
     * (see {@link #deny(Claim, Decision, long, long)}).
     *
     * @param claim      the rule the store decided by, the key and the cost
     * @param decision   the store's rejection
     * @param askedAt    when the store was asked, in ms
     * @param answeredAt when its answer came back, in ms
     * @param mark       {@link #mark()} taken before the store was asked
     */
    public void deny(Claim claim, Decision decision, long askedAt, long answeredAt, long mark) {
        Slot slot = Slot.of(claim);
        if (stale(claim, slot, mark) || denials.size() >= maxEntries && !sweep(answeredAt)) {
            return;
        }
        Denial denial = new Denial(claim.rule(), claim.cost(), decision, askedAt, answeredAt,
                Math.min(answeredAt + decision.retryAfter().toMillis(), answeredAt + maxHoldMillis));
        denials.put(slot, denial);
        // A change reported while this was written may have found nothing to forget yet.
        if (stale(claim, slot, mark)) {
            denials.remove(slot, denial);
        }
    }

    /**
     * The number of the latest change reported: take it before asking the store, and give it to
     * {@link #deny(Claim, Decision, long, long)} with the store's rejection.
     *
     * @return the mark
     */
    public long mark() {
        return changes.get();
    }

    private boolean stale(Claim claim, Slot slot, long mark) {
        return givingBack.contains(claim.rule().name()) || changedAt.get(stripe(slot)) > mark;
    }

    private static int stripe(Slot slot) {
        return slot.hashCode() & (STRIPES - 1);
    }

    /**
     * Requests reserve these claims' rules: from now on none of their rejections is kept, and
     * those kept are forgotten, for every key. Units reserved may be given back at any moment,
     * by this process or another, so such a rule's retry-after is only an upper bound.
     *
     * @param claims a reservation's claims
     */
    public void reserving(List<Claim> claims) {
        for (Claim claim : claims) {
            if (givingBack.add(claim.rule().name())) {
                forget(claim.rule().name(), null);
            }
        }
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
        for (Claim claim : claims) {
            if (claim.rule().countRejected()) {
                return Optional.empty();
            }
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
                decisions[i] = Verdicts.skipped(rule.name(), rule.limit());
            }
        }
        return any ? Optional.of(Decisions.of(claims, List.of(decisions))) : Optional.empty();
    }

    /**
     * Forgets the rejections of a rule, for every key (a scan: for rare events), or for one key:
     * when its state changed (units taken or given back, a reset).
     *
     * @param rule the rule's name
     * @param key  the key, or null for every key
     */
    public void forget(String rule, String key) {
        // Numbered before anything is removed: a rejection being written meanwhile sees it.
        long change = changes.incrementAndGet();
        if (key != null) {
            Slot slot = new Slot(rule, key);
            changedAt.accumulateAndGet(stripe(slot), change, Math::max);
            denials.remove(slot);
            return;
        }
        for (int i = 0; i < STRIPES; i++) {
            changedAt.accumulateAndGet(i, change, Math::max);
        }
        denials.keySet().removeIf(slot -> slot.rule().equals(rule));
    }

    /** Drops expired entries; true when there is room afterwards. */
    private boolean sweep(long nowMs) {
        long now = System.nanoTime();
        long last = lastSweep.get();
        if (now - last >= SWEEP_INTERVAL_NANOS && lastSweep.compareAndSet(last, now)) {
            for (Iterator<Denial> it = denials.values().iterator(); it.hasNext(); ) {
                Denial denial = it.next();
                if (denial.heldUntil() <= nowMs || nowMs < denial.askedAt()) {
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
