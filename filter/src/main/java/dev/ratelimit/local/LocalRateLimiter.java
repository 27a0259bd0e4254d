package dev.ratelimit.local;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Rule;
import dev.ratelimit.RuleKey;
import dev.ratelimit.internal.RuleKeys;

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
    public Decisions acquireAll(List<RuleKey> ruleKeys, long cost) {
        RuleKeys.check(ruleKeys, cost);
        synchronized (states) {
            long now = clock.getAsLong();
            sweepIfDue(now);
            List<KeyState> keyStates = new ArrayList<>(ruleKeys.size());
            for (RuleKey ruleKey : ruleKeys) {
                keyStates.add(states.computeIfAbsent(StateKey.of(ruleKey),
                        k -> KeyState.create(ruleKey.rule().algorithm())));
            }
            List<Outcome> outcomes = new ArrayList<>(ruleKeys.size());
            if (ruleKeys.size() == 1) {
                Rule rule = ruleKeys.get(0).rule();
                outcomes.add(keyStates.get(0).take(now, rule, cost, true, rule.countRejected()));
            } else {
                // Decide every rule first, then write: all or nothing, as the script does.
                boolean allAllowed = true;
                for (int i = 0; i < ruleKeys.size(); i++) {
                    Outcome outcome = keyStates.get(i).take(now, ruleKeys.get(i).rule(), cost, false, false);
                    outcomes.add(outcome);
                    allAllowed &= outcome.allowed();
                }
                for (int i = 0; i < ruleKeys.size(); i++) {
                    Rule rule = ruleKeys.get(i).rule();
                    if (allAllowed || rule.countRejected()) {
                        outcomes.set(i, keyStates.get(i).take(now, rule, cost, true, true));
                    }
                }
            }
            List<Decision> decisions = new ArrayList<>(ruleKeys.size());
            for (int i = 0; i < ruleKeys.size(); i++) {
                decisions.add(decision(ruleKeys.get(i).rule(), outcomes.get(i)));
            }
            return Decisions.of(decisions);
        }
    }

    @Override
    public Decision peek(Rule rule, String key, long cost) {
        RuleKey ruleKey = new RuleKey(rule, key);
        rule.checkCost(cost);
        synchronized (states) {
            long now = clock.getAsLong();
            KeyState state = states.get(StateKey.of(ruleKey));
            if (state == null) {
                state = KeyState.create(rule.algorithm());
            }
            return decision(rule, state.take(now, rule, cost, false, false));
        }
    }

    @Override
    public void reset(Rule rule, String key) {
        StateKey stateKey = StateKey.of(new RuleKey(rule, key));
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
        static StateKey of(RuleKey ruleKey) {
            return new StateKey(ruleKey.rule().name(), ruleKey.rule().algorithm(), ruleKey.key());
        }
    }
}
