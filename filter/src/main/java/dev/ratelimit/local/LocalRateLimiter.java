package dev.ratelimit.local;

import dev.ratelimit.internal.QueuePlace;
import dev.ratelimit.internal.Refundable;
import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.internal.Charges;
import dev.ratelimit.internal.Claims;
import dev.ratelimit.internal.Verdicts;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.LongSupplier;
import java.util.function.ToLongFunction;

/**
 * The in-process limiter: the same five algorithms with the same answers as the Valkey
 * scripts, kept in this JVM's memory. Limits are per instance (each app server counts on its
 * own), so it is the default only where no Valkey is configured, and the fallback while
 * Valkey is unreachable.
 *
 * <p>Expired state is swept as the limiter is used, so idle keys cost nothing, and at most
 * {@code maxKeys} keys are held: past that the least recently used key is forgotten (its next
 * request starts from a full quota), so a flood of distinct clients cannot exhaust the heap.
 * Decisions are serialised on one lock: that keeps several rules all-or-nothing exactly as on
 * Valkey.
 */
public final class LocalRateLimiter implements RateLimiter {

    /** Default most keys held. */
    public static final int DEFAULT_MAX_KEYS = 100_000;

    /** How many decisions pass between sweeps of expired state. */
    private static final int SWEEP_EVERY = 1024;

    private final LongSupplier clock;
    private final Map<StateKey, KeyState> states;
    private int untilSweep = SWEEP_EVERY;
    /**
     * The number of the last deciding call. Never reused, not even for a key reset or evicted
     * since: leases, log entries and states' generations are named after it, so a refund of a
     * reservation older than a reset can never match what was taken after it.
     */
    private long calls;

    private LocalRateLimiter(LongSupplier clock, int maxKeys) {
        if (maxKeys < 1) {
            throw new IllegalArgumentException("max keys " + maxKeys + " must be at least 1");
        }
        this.clock = clock;
        // Access order: the eldest entry is the least recently used one, the one to forget.
        this.states = new LinkedHashMap<>(16, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<StateKey, KeyState> eldest) {
                return size() > maxKeys;
            }
        };
    }

    /**
     * A limiter on the system clock holding at most {@value #DEFAULT_MAX_KEYS} keys.
     *
     * @return a new limiter
     */
    public static LocalRateLimiter create() {
        return new LocalRateLimiter(System::currentTimeMillis, DEFAULT_MAX_KEYS);
    }

    /**
     * A limiter on the system clock holding at most {@code maxKeys} keys.
     *
     * @param maxKeys most keys held, at least 1
     * @return a new limiter
     */
    public static LocalRateLimiter create(int maxKeys) {
        return new LocalRateLimiter(System::currentTimeMillis, maxKeys);
    }

    /**
     * A limiter on the given clock, for tests.
     *
     * @param millis  epoch milliseconds
     * @param maxKeys most keys held, at least 1
     * @return a new limiter
     */
    public static LocalRateLimiter withClock(LongSupplier millis, int maxKeys) {
        return new LocalRateLimiter(Objects.requireNonNull(millis, "millis"), maxKeys);
    }

    @Override
    public Decisions acquireAll(List<Claim> claims) {
        return Verdicts.combine(claims, take(claims), false);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Giving back reaches the key's state as it is then: a key forgotten since (expired,
     * reset, or evicted as the least recently used) has nothing to give back.
     */
    @Override
    public Reservation reserveAll(List<Claim> claims) {
        List<Verdicts.Answer> answers = take(claims);
        Decisions decisions = Verdicts.combine(claims, answers, false);
        if (!decisions.allowed()) {
            return Reservation.kept(decisions);
        }
        return Refundable.of(decisions, which -> giveBack(claims, answers, Verdicts.toGiveBack(claims, answers, which)),
                actual -> adjust(claims, answers, actual), QueuePlace.of(claims, answers));
    }

    /**
     * Settles a reservation by its actual costs (see {@link Reservation#commit(ToLongFunction)}):
     * what a cost leaves unused given back, what it passes taken whatever the key has left, as a
     * count-rejected attempt is (so at most the overdraw that allows: a bucket two full buckets,
     * a window its limit; the rest is dropped and reported).
     */
    private Refundable.Charged adjust(List<Claim> claims, List<Verdicts.Answer> answers, ToLongFunction<Rule> actual) {
        List<String> charged = new ArrayList<>();
        List<String> dropped = new ArrayList<>();
        List<String> given = new ArrayList<>();
        synchronized (states) {
            long now = clock.getAsLong();
            long call = ++calls;
            for (int i : Verdicts.toGiveBack(claims, answers, rule -> true)) {
                Claim claim = claims.get(i);
                Rule rule = claim.rule();
                // The key's state as it is now: one forgotten since has nothing to give back or owe.
                KeyState state = states.get(StateKey.of(claim));
                Charges.Adjustment adjustment = Charges.Adjustment.of(claim, actual.applyAsLong(rule));
                if (state == null) {
                    continue;
                }
                switch (adjustment.kind()) {
                    case RELEASE, GIVE_BACK -> {
                        long units = adjustment.kind() == Charges.Adjustment.Kind.RELEASE ? claim.cost() : adjustment.units();
                        if (state.refund(now, rule, units, answers.get(i))) {
                            given.add(rule.name());
                        }
                    }
                    case CHARGE -> (charge(state, claim, adjustment.units(), now, call) ? charged : dropped)
                            .add(rule.name());
                    case KEEP -> {
                    }
                }
            }
        }
        return new Refundable.Charged(charged, dropped, given, List.of());
    }

    /**
     * Counts work already done on the claim's key whatever it has left, as
     * {@link Reservation#commit(ToLongFunction)} charges what passes a reservation: what a
     * failure policy's fallback is charged when the store cannot take a charge.
     *
     * @param claim the claim the work was admitted by (its rule and key)
     * @param units the units to count, at least 1
     * @return whether all were counted (false: the key's debt reached what this limiter holds)
     */
    public boolean charge(Claim claim, long units) {
        if (units < 1) {
            throw new IllegalArgumentException("a charge takes at least 1 unit, not " + units);
        }
        if (!Charges.supports(claim.rule().algorithm())) {
            return false;
        }
        synchronized (states) {
            long now = clock.getAsLong();
            long call = ++calls;
            sweepIfDue(now);
            KeyState state = states.computeIfAbsent(StateKey.of(claim), k -> KeyState.create(claim.rule().algorithm()));
            return charge(state, claim, units, now, call);
        }
    }

    /** Takes {@code units} whatever the key has left, as a count-rejected attempt is taken; whether all were. */
    private static boolean charge(KeyState state, Claim claim, long units, long now, long call) {
        Rule rule = claim.rule();
        long rest = Math.min(units, Charges.bound(claim));
        long before = state.take(now, rule, 1, false, false, call).remaining();
        while (rest > 0) {
            long part = Math.min(rest, rule.capacity());
            state.take(now, rule, part, true, true, call);
            rest -= part;
        }
        // Whole when it fitted in what was left, or in a fixed window's count, which has no bound;
        // past that a bucket or a window counter takes what its overdraw allows, which is not
        // known here exactly: reported as cut (a bucket's debt past one bucket, a window
        // counter's count past its limit, are not held in process).
        return units <= before || rule.algorithm() == Algorithm.FIXED_WINDOW;
    }

    /** Decides and takes the claims, all or nothing: every claim's answer. */
    private List<Verdicts.Answer> take(List<Claim> asked) {
        List<Claim> claims = Claims.checked(asked);
        synchronized (states) {
            long now = clock.getAsLong();
            long call = ++calls;
            sweepIfDue(now);
            List<KeyState> keyStates = new ArrayList<>(claims.size());
            for (Claim claim : claims) {
                keyStates.add(states.computeIfAbsent(StateKey.of(claim),
                        k -> KeyState.create(claim.rule().algorithm())));
            }
            List<Verdicts.Answer> answers = new ArrayList<>(claims.size());
            if (claims.size() == 1) {
                Rule rule = claims.get(0).rule();
                answers.add(keyStates.get(0).take(now, rule, claims.get(0).cost(), true, rule.countRejected(), call));
            } else {
                decideAllThenWrite(claims, keyStates, now, call, answers);
            }
            return answers;
        }
    }

    private List<String> giveBack(List<Claim> claims, List<Verdicts.Answer> answers, List<Integer> indexes) {
        List<String> given = new ArrayList<>(indexes.size());
        synchronized (states) {
            long now = clock.getAsLong();
            for (int i : indexes) {
                Claim claim = claims.get(i);
                // The key's state as it is now, as Valkey reads the key: one forgotten since
                // (expired, reset, evicted) has nothing to give back.
                KeyState state = states.get(StateKey.of(claim));
                if (state != null
                        && state.refund(now, claim.rule(), claim.cost(), answers.get(i))) {
                    given.add(claim.rule().name());
                }
            }
        }
        return given;
    }

    /** Several rules: decide every rule first, then write; all or nothing, as the script does. */
    private static void decideAllThenWrite(List<Claim> claims, List<KeyState> keyStates, long now, long call,
                                           List<Verdicts.Answer> outcomes) {
        boolean allAllowed = true;
        for (int i = 0; i < claims.size(); i++) {
            Rule rule = claims.get(i).rule();
            long cost = claims.get(i).cost();
            Verdicts.Answer outcome = keyStates.get(i).take(now, rule, cost, false, false, call);
            outcomes.add(outcome);
            allAllowed &= outcome.allowed() || rule.shadow();
        }
        for (int i = 0; i < claims.size(); i++) {
            Rule rule = claims.get(i).rule();
            long cost = claims.get(i).cost();
            if (allAllowed) {
                // A shadow rule counts as if it were alone; the others all allow and consume.
                outcomes.set(i, keyStates.get(i).take(now, rule, cost, true, !rule.shadow() || rule.countRejected(),
                        call));
            } else if (rule.countRejected()) {
                outcomes.set(i, keyStates.get(i).take(now, rule, cost, true, true, call));
            }
        }
    }

    @Override
    public Decision peek(Rule rule, String key, long cost) {
        Claim claim = Claim.of(rule, key, cost);
        synchronized (states) {
            long now = clock.getAsLong();
            KeyState state = states.get(StateKey.of(claim));
            if (state == null) {
                state = KeyState.create(rule.algorithm());
            }
            return Verdicts.combine(List.of(claim), List.of(state.take(now, rule, cost, false, false, 0)), false)
                    .get(0);
        }
    }

    @Override
    public void reset(Rule rule, String key) {
        StateKey stateKey = StateKey.of(Claim.of(rule, key));
        synchronized (states) {
            states.remove(stateKey);
        }
    }

    /** Nothing to release: the state is garbage once the limiter is. */
    @Override
    public void close() {
        synchronized (states) {
            states.clear();
        }
    }

    /**
     * How many keys hold state now, for tests and monitoring.
     *
     * @return the number of stored states
     */
    public int size() {
        synchronized (states) {
            return states.size();
        }
    }

    private void sweepIfDue(long now) {
        if (--untilSweep > 0) {
            return;
        }
        untilSweep = SWEEP_EVERY;
        for (Iterator<KeyState> it = states.values().iterator(); it.hasNext(); ) {
            if (it.next().expiresAt() <= now) {
                it.remove();
            }
        }
    }

    /** The state's identity: a rule that changes algorithm starts from a new state. */
    private record StateKey(String rule, Algorithm algorithm, String key) {
        static StateKey of(Claim claim) {
            return new StateKey(claim.rule().name(), claim.rule().algorithm(), claim.key());
        }
    }
}
