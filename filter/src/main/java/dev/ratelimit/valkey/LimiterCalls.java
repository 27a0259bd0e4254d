package dev.ratelimit.valkey;

import dev.ratelimit.Claim;
import dev.ratelimit.RateLimitException;
import dev.ratelimit.UnreadableStateException;
import dev.ratelimit.internal.Undo;
import dev.ratelimit.internal.Verdicts;
import dev.ratelimit.valkey.connection.CircuitBreaker;
import dev.ratelimit.valkey.connection.GuardedCalls;
import dev.ratelimit.valkey.script.Charge;
import dev.ratelimit.valkey.script.Lending;
import dev.ratelimit.valkey.script.LimiterScript;
import dev.ratelimit.valkey.script.Refund;
import dev.ratelimit.valkey.script.ScriptFormat;
import dev.ratelimit.valkey.script.ScriptMode;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * The function calls of one {@link ValkeyRateLimiter}: the arguments of each, the acquiring or
 * peeking call, the refund calls (one per slot group on a cluster), the reset, and the permits
 * that a lost reply or a failed refund may leave held ({@link LostPermits}), released later.
 * Every call goes through {@link GuardedCalls}, so the breaker counts it.
 */
final class LimiterCalls {

    private static final String SERVER_CLOCK = "-1";
    /** Call numbers stay below 2^53, exact in Lua's numbers. */
    private static final long MAX_CALL_NUMBER = 1L << 53;

    private final LimiterClient client;
    private final CircuitBreaker breaker;
    private final LimiterScript script = LimiterScript.load();
    private final GuardedCalls calls;
    private final LostPermits lostPermits = new LostPermits(System::nanoTime);
    private final Function<Claim, String> stateKey;
    /** Null for the server's clock ({@code TIME} inside the script). */
    private final LongSupplier clientClock;

    LimiterCalls(LimiterClient client, CircuitBreaker breaker, LongSupplier clientClock,
                 Function<Claim, String> stateKey) {
        this.client = client;
        this.breaker = breaker;
        this.calls = new GuardedCalls(client.endpoint(), breaker, client.tryAgainFor(), stateKey);
        this.stateKey = stateKey;
        this.clientClock = clientClock;
    }

    /** Whether claims in different slots need calls of their own (see {@link SlotGroups}). */
    boolean cluster() {
        return client.cluster();
    }

    /** The time argument of a call: the client clock's milliseconds, or the server's clock. */
    String now() {
        return clientClock == null ? SERVER_CLOCK : Long.toString(clientClock.getAsLong());
    }

    /** The claims' slot groups on a cluster (see {@link SlotGroups#of}). */
    List<SlotGroups.Group> slotGroups(List<Claim> claims) {
        return SlotGroups.of(claims, stateKey);
    }

    /** Calls like these on the same connections whose claims' keys are state keys (found by {@code SCAN}). */
    LimiterCalls byStateKey() {
        return new LimiterCalls(client, breaker, clientClock, Claim::key);
    }

    /** One read for operators (raw state, {@code SCAN}), through the breaker like every call. */
    <T> T read(String operation, java.util.function.Supplier<T> call) {
        return calls.run(operation, List.of(), call);
    }

    /** Deletes a claim's state: one {@code DEL}, through the breaker like every call. */
    void reset(Claim claim) {
        calls.run("reset", List.of(), () -> client.client().del(stateKey.apply(claim)));
    }

    /**
     * One function call. Its number names the concurrency permits it takes: when an acquiring call fails
     * with nothing known of what Valkey did (a lost reply), they are remembered to be released.
     */
    List<Verdicts.Answer> answers(List<Claim> claims, ScriptMode mode, String now) {
        return answers(claims, Lending.NONE, mode, now);
    }

    /** One function call, some of whose units local leases take (see {@link Lending}). */
    List<Verdicts.Answer> answers(List<Claim> claims, Lending lending, ScriptMode mode, String now) {
        long call = ThreadLocalRandom.current().nextLong(1, MAX_CALL_NUMBER);
        List<String> keys = claims.stream().map(stateKey).toList();
        List<String> args = ScriptFormat.decide(now, mode, call, claims, lending, callerNow(now));
        try {
            Object reply = calls.run(mode == ScriptMode.PEEK ? "peek" : "acquire", claims,
                    () -> script.run(client.client(), client.functionCalls(), keys, args));
            return ScriptFormat.answers(client.endpoint(), claims, reply);
        } catch (UnreadableStateException | GuardedCalls.NotAttempted e) {
            throw e; // refused before anything was written, or never sent
        } catch (RateLimitException e) {
            if (mode == ScriptMode.ACQUIRE) {
                for (Claim claim : claims) {
                    lostPermits.remember(claim, call);
                }
            }
            throw e;
        }
    }

    /**
     * One charge call per slot group ({@link ScriptMode#CHARGE}): for each charge, whether the
     * store counted all its units (false: the key's debt reached its bound, the rest dropped).
     * Never retried after a lost reply, which could count the work twice: a charge is made at
     * most once, and one that fails is the caller's to report.
     */
    boolean[] charge(List<Charge> charges) {
        String now = now();
        boolean[] whole = new boolean[charges.size()];
        List<Claim> claims = charges.stream().map(Charge::claim).toList();
        List<SlotGroups.Group> groups = cluster() ? slotGroups(claims) : List.of(SlotGroups.Group.all(charges.size()));
        for (SlotGroups.Group group : groups) {
            List<Charge> ofGroup = group.of(charges);
            List<Claim> claimsOfGroup = ofGroup.stream().map(Charge::claim).toList();
            List<String> keys = claimsOfGroup.stream().map(stateKey).toList();
            long call = ThreadLocalRandom.current().nextLong(1, MAX_CALL_NUMBER);
            List<String> args = ScriptFormat.charge(now, call, ofGroup, callerNow(now));
            Object reply = calls.run("charge", claimsOfGroup,
                    () -> script.run(client.client(), client.functionCalls(), keys, args));
            List<Verdicts.Answer> answers = ScriptFormat.answers(client.endpoint(), claimsOfGroup, reply);
            boolean[] ofThis = new boolean[answers.size()];
            for (int i = 0; i < ofThis.length; i++) {
                ofThis[i] = answers.get(i).allowed();
            }
            group.place(ofThis, whole);
        }
        return whole;
    }

    /**
     * One refund call per slot group: for each refund, what it gave back (0: nothing; a bucket's
     * ticks, else 1; see {@code refund.lua}). When a
     * group's call fails and {@code rememberPermits}, the permits of that group and of the groups
     * not yet called are remembered, to be released once Valkey answers again.
     */
    long[] refund(List<Refund> back, boolean rememberPermits) {
        return refund(back, rememberPermits, now());
    }

    /**
     * Local leases' give-backs, worked out at {@code clientNow} on the lease clock: with a client
     * clock, sent at that same time, so that the store measures no refill the give-back did not
     * (a thread held up between the two would otherwise have the store charge its delay as lost).
     */
    void giveBack(List<Refund> back, long clientNow) {
        refund(back, false, clientClock == null ? SERVER_CLOCK : Long.toString(clientNow));
    }

    private long[] refund(List<Refund> back, boolean rememberPermits, String now) {
        long[] given = new long[back.size()];
        List<Claim> claims = back.stream().map(Refund::claim).toList();
        List<SlotGroups.Group> groups = cluster() ? slotGroups(claims) : List.of(SlotGroups.Group.all(back.size()));
        for (int g = 0; g < groups.size(); g++) {
            List<Refund> ofGroup = groups.get(g).of(back);
            List<Claim> claimsOfGroup = ofGroup.stream().map(Refund::claim).toList();
            List<String> keys = claimsOfGroup.stream().map(stateKey).toList();
            List<String> args = ScriptFormat.refund(now, ofGroup, callerNow(now));
            try {
                Object reply = calls.run("refund", claimsOfGroup,
                        () -> script.run(client.client(), client.functionCalls(), script.refundName(), keys, args));
                groups.get(g).place(ScriptFormat.givenBack(client.endpoint(), claimsOfGroup.size(), reply), given);
            } catch (RateLimitException e) {
                for (SlotGroups.Group unsent : rememberPermits ? groups.subList(g, groups.size()) : List.<SlotGroups.Group>of()) {
                    for (Refund refund : unsent.of(back)) {
                        lostPermits.remember(refund.claim(), refund.taken().undo().where());
                    }
                }
                throw e;
            }
        }
        return given;
    }

    /**
     * Releases the concurrency permits that calls whose replies were lost may hold, or whose release failed
     * (see {@link LostPermits}): one refund call, at most every 100 ms and only while there are
     * any; a failure leaves them for a later try.
     */
    void releaseLostPermits() {
        List<LostPermits.Permit> due = lostPermits.due();
        if (due.isEmpty()) {
            return;
        }
        List<Refund> releases = due.stream().map(permit -> Refund.of(permit.claim(),
                new Verdicts.Answer(true, 0, 0, 0, 0, new Undo(permit.call(), 0)))).toList();
        boolean[] released = null;
        try {
            long[] given = refund(releases, false);
            released = new boolean[given.length];
            for (int i = 0; i < given.length; i++) {
                released[i] = given[i] > 0;
            }
        } catch (RateLimitException e) {
            // Valkey failed again: they are tried once more after a later answer.
        }
        lostPermits.tried(due, released);
    }

    /**
     * The caller's now for a call's time argument: the client clock's, or this machine's when
     * the server's clock decides (it only places a calendar window's periods around it).
     */
    private static long callerNow(String now) {
        return SERVER_CLOCK.equals(now) ? System.currentTimeMillis() : Long.parseLong(now);
    }
}
