package dev.ratelimit.local;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Rule;
import dev.ratelimit.Claim;
import dev.ratelimit.internal.Claims;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * The in-process limiter: the same five algorithms with the same answers as the Valkey
 * scripts, kept in this JVM's memory. Limits are per instance (each app server counts on its
 * own), so it is the default only where no Valkey is configured, and the fallback while
 * Valkey is unreachable.
 *
 * <p>Expired state is swept as the limiter is used, so idle keys cost nothing. Decisions are
 * serialised on one lock: that keeps several rules all-or-nothing exactly as on Valkey.
 */
public final class LocalRateLimiter implements RateLimiter {

    /** How many decisions pass between sweeps of expired state. */
    private static final int SWEEP_EVERY = 1024;

    private final LongSupplier clock;
    private final Map<StateKey, KeyState> states = new HashMap<>();
    private int untilSweep = SWEEP_EVERY;

    private LocalRateLimiter(LongSupplier clock) {
        this.clock = clock;
    }

    /**
     * A limiter on the system clock.
     *
     * @return a new limiter
     */
    public static LocalRateLimiter create() {
        return new LocalRateLimiter(System::currentTimeMillis);
    }

    /**
     * A limiter on the given clock, for tests.
     *
     * @param millis epoch milliseconds
     * @return a new limiter
     */
    public static LocalRateLimiter withClock(LongSupplier millis) {
        return new LocalRateLimiter(Objects.requireNonNull(millis, "millis"));
    }

    @Override
    public Decisions acquireAll(List<Claim> claims) {
        Claims.check(claims);
        synchronized (states) {
            long now = clock.getAsLong();
            sweepIfDue(now);
            List<KeyState> keyStates = new ArrayList<>(claims.size());
            for (Claim claim : claims) {
                keyStates.add(states.computeIfAbsent(StateKey.of(claim),
                        k -> KeyState.create(claim.rule().algorithm())));
            }
            List<Outcome> outcomes = new ArrayList<>(claims.size());
            if (claims.size() == 1) {
                Rule rule = claims.get(0).rule();
                outcomes.add(keyStates.get(0).take(now, rule, claims.get(0).cost(), true, rule.countRejected()));
            } else {
                decideAllThenWrite(claims, keyStates, now, outcomes);
            }
            List<Decision> decisions = new ArrayList<>(claims.size());
            for (int i = 0; i < claims.size(); i++) {
                decisions.add(decision(claims.get(i).rule(), outcomes.get(i)));
            }
            return Decisions.of(claims, decisions);
        }
    }

    /** Several rules: decide every rule first, then write; all or nothing, as the script does. */
    private static void decideAllThenWrite(List<Claim> claims, List<KeyState> keyStates, long now,
                                           List<Outcome> outcomes) {
        boolean allAllowed = true;
        for (int i = 0; i < claims.size(); i++) {
            Rule rule = claims.get(i).rule();
            long cost = claims.get(i).cost();
            Outcome outcome = keyStates.get(i).take(now, rule, cost, false, false);
            outcomes.add(outcome);
            allAllowed &= outcome.allowed() || rule.shadow();
        }
        for (int i = 0; i < claims.size(); i++) {
            Rule rule = claims.get(i).rule();
            long cost = claims.get(i).cost();
            if (allAllowed) {
                // A shadow rule counts as if it were alone; the others all allow and consume.
                outcomes.set(i, keyStates.get(i).take(now, rule, cost, true, !rule.shadow() || rule.countRejected()));
            } else if (rule.countRejected()) {
                outcomes.set(i, keyStates.get(i).take(now, rule, cost, true, true));
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
            return decision(rule, state.take(now, rule, cost, false, false));
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

    private static Decision decision(Rule rule, Outcome outcome) {
        Duration resetAfter = Duration.ofMillis(outcome.resetAfterMillis());
        return outcome.allowed()
                ? Decision.allowed(rule.name(), rule.limit(), outcome.remaining(), resetAfter)
                : Decision.rejected(rule.name(), rule.limit(), outcome.remaining(), resetAfter,
                        Duration.ofMillis(outcome.retryAfterMillis()));
    }

    /** The state's identity: a rule that changes algorithm starts from a new state. */
    private record StateKey(String rule, Algorithm algorithm, String key) {
        static StateKey of(Claim claim) {
            return new StateKey(claim.rule().name(), claim.rule().algorithm(), claim.key());
        }
    }
}
