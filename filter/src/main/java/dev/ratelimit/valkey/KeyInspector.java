package dev.ratelimit.valkey;

import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Rule;
import dev.ratelimit.UnreadableStateException;
import dev.ratelimit.internal.Verdicts;
import dev.ratelimit.valkey.lease.LeasePolicy;
import dev.ratelimit.valkey.lease.LeasedPeek;
import dev.ratelimit.valkey.lease.Leases;
import dev.ratelimit.valkey.script.ScriptMode;
import redis.clients.jedis.ScanIteration;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.resps.Tuple;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.TreeMap;
import java.util.function.IntConsumer;

/**
 * A rule's state by key, for operators: the command line's {@code inspect}, {@code reset} and
 * {@code top}, and the operations of each rule's MBean. Reading consumes nothing: a state is
 * peeked by the rule's own function, exactly as a request would be decided now, and its raw
 * value read beside it (not atomically with the peek: a request in between shows in one and not
 * the other). Every call goes through the limiter's breaker and timeouts. Get one from
 * {@link ValkeyRateLimiter#inspector()}.
 */
public final class KeyInspector {

    /** Sorted-set entries shown of a raw state: a sliding log may hold thousands. */
    public static final int RAW_ENTRIES = 10;
    /** Keys asked of {@code SCAN} at a time, and peeked in one call on a standalone Valkey. */
    private static final int SCAN_BATCH = 100;

    private final ValkeyRateLimiter limiter;
    private final LimiterClient client;
    private final LimiterCalls calls;
    /** Peeks at keys found by {@code SCAN}: the claim's key is the state key itself. */
    private final LimiterCalls byStateKey;
    private final Leases leases;
    private final String keyPrefix;

    KeyInspector(ValkeyRateLimiter limiter, LimiterClient client, LimiterCalls calls, Leases leases, String keyPrefix) {
        this.limiter = limiter;
        this.client = client;
        this.calls = calls;
        this.byStateKey = calls.byStateKey();
        this.leases = leases;
        this.keyPrefix = keyPrefix;
    }

    /**
     * Whether the primaries this limiter writes to persist their data ({@code CONFIG GET
     * appendonly save}), so that counts of long windows survive a restart. Bypasses the
     * circuit breaker: it is asked once, at start-up, and its failure is an answer, not an error.
     *
     * @return the answer; unknown when a server refuses ({@code NOPERM}) or cannot be reached
     */
    public Persistence persistence() {
        return PersistenceQuestion.ask(client.client(), client.endpoint());
    }

    /**
     * A key's state: what a request of {@code cost} would get now (with the units this limiter
     * holds in local leases, as it would decide), and the raw state.
     *
     * @param rule the rule
     * @param key  the key as the rule builds it, e.g. {@code param.username:alice}
     * @param cost the units a request takes
     * @return the state
     * @throws dev.ratelimit.RateLimitException when Valkey cannot be asked
     */
    public KeyState inspect(Rule rule, String key, long cost) {
        Claim claim = Claim.of(rule, key, cost);
        LeasePolicy policy = leases.policy(claim);
        return state(claim, limiter.stateKey(rule, key), calls, policy);
    }

    /**
     * Forgets a key's state (the limiter's {@code reset}), and says what it was just before, as
     * {@link #inspect} says it: for a request of the rule's cost, with the plan's limits asked
     * for (one state is kept per key whatever the plan, so any plan's rule forgets it).
     *
     * @param rule the rule, or the plan's rule a request is decided by
     * @param key  the key as the rule builds it
     * @param cost the units a request takes
     * @return the state removed; {@link KeyState#exists()} false when there was none
     * @throws dev.ratelimit.RateLimitException when Valkey cannot be asked
     */
    public KeyState reset(Rule rule, String key, long cost) {
        KeyState before = inspect(rule, key, cost);
        limiter.reset(rule, key);
        return before;
    }

    /**
     * The keys of a rule nearest their limit: rejected first, then by fewest remaining, found
     * with {@code SCAN} (on every primary of a cluster), never {@code KEYS}. Stops after
     * {@code maxKeys} keys or {@code maxTime}, whichever comes first.
     *
     * @param rule     the rule
     * @param cost     the units a request takes
     * @param top      how many to return, in full
     * @param maxKeys  the most keys to look at
     * @param maxTime  the most time to spend scanning
     * @param progress told the keys looked at so far after each batch
     * @return the nearest keys, how many were looked at, and whether that was all of them
     * @throws dev.ratelimit.RateLimitException when Valkey cannot be asked
     */
    public KeyScan scan(Rule rule, long cost, int top, int maxKeys, Duration maxTime, IntConsumer progress) {
        String match = glob(keyPrefix + ':' + rule.name() + ':' + rule.algorithm().id() + ":{") + '*';
        long deadline = System.nanoTime() + maxTime.toNanos();
        NearestKeys nearest = new NearestKeys(top);
        ScanIteration keys = calls.read("scan", () -> client.client().scanIteration(SCAN_BATCH, match));
        boolean complete = true;
        while (!keys.isIterationCompleted()) {
            if (nearest.seen() >= maxKeys || System.nanoTime() - deadline > 0) {
                complete = false;
                break;
            }
            Collection<String> batch = calls.read("scan", keys::nextBatchList);
            List<String> room = new ArrayList<>(batch).subList(0, Math.min(batch.size(), maxKeys - nearest.seen()));
            complete &= room.size() == batch.size();
            peekAll(rule, cost, room, nearest);
            progress.accept(nearest.seen());
        }
        List<KeyState> states = nearest.keys().stream()
                .map(stateKey -> state(Claim.of(rule, stateKey, cost), stateKey, byStateKey, null)).toList();
        return new KeyScan(states, nearest.seen(), complete);
    }

    /** Peeks at a batch in one call (one per slot on a cluster); a batch with an unreadable state, key by key. */
    private void peekAll(Rule rule, long cost, List<String> stateKeys, NearestKeys nearest) {
        List<Claim> claims = stateKeys.stream().map(k -> Claim.of(rule, k, cost)).toList();
        List<SlotGroups.Group> groups = calls.cluster() ? byStateKey.slotGroups(claims)
                : claims.isEmpty() ? List.of() : List.of(SlotGroups.Group.all(claims.size()));
        for (SlotGroups.Group group : groups) {
            List<Claim> ofGroup = group.of(claims);
            try {
                List<Decision> decisions = peek(ofGroup);
                for (int i = 0; i < ofGroup.size(); i++) {
                    nearest.add(ofGroup.get(i).key(), decisions.get(i));
                }
            } catch (UnreadableStateException e) {
                for (Claim claim : ofGroup) {
                    try {
                        nearest.add(claim.key(), peek(List.of(claim)).get(0));
                    } catch (UnreadableStateException one) {
                        nearest.addUnreadable(claim.key());
                    }
                }
            }
        }
    }

    private List<Decision> peek(List<Claim> claims) {
        return Verdicts.combine(claims, byStateKey.answers(claims, ScriptMode.PEEK, byStateKey.now()), false)
                .all();
    }

    /** A state peeked through {@code via}, with the local leases of {@code policy} (null: none). */
    private KeyState state(Claim claim, String stateKey, LimiterCalls via, LeasePolicy policy) {
        List<Claim> claims = List.of(claim);
        Rule rule = claim.rule();
        long held = policy == null ? 0 : leases.held(rule, claim.key());
        try {
            List<Verdicts.Answer> answers = via.answers(claims, ScriptMode.PEEK, via.now());
            if (via == calls) {
                answers = LeasedPeek.withHeld(leases, claims, answers);
            }
            Decision decision = Verdicts.combine(claims, answers, false).get(0);
            // A fixed window answers its current window's end as the next unit even with the
            // quota full (the effective window of the header fields); nothing is due then.
            Duration next = decision.resetAfter().isZero() ? Duration.ZERO : Duration.ofMillis(answers.get(0).nextMillis());
            return KeyState.read(rule, stateKey, decision, next, held, policy == null ? Duration.ZERO : policy.time(),
                    raw(stateKey));
        } catch (UnreadableStateException e) {
            return KeyState.unreadable(rule, stateKey, e.getMessage(), raw(stateKey));
        }
    }

    /** The raw state: its type, its value in lines, its TTL; three or four reads. */
    private KeyState.RawState raw(String stateKey) {
        UnifiedJedis jedis = client.client();
        String type = calls.read("type", () -> jedis.type(stateKey));
        List<String> entries = switch (type) {
            case "string" -> List.of(String.valueOf(calls.read("get", () -> jedis.get(stateKey))));
            case "hash" -> new TreeMap<>(calls.read("hgetall", () -> jedis.hgetAll(stateKey))).entrySet().stream()
                    .map(e -> e.getKey() + "=" + e.getValue()).toList();
            case "zset" -> zset(jedis, stateKey);
            default -> List.of();
        };
        long ttl = calls.read("pttl", () -> jedis.pttl(stateKey));
        return new KeyState.RawState(type, entries, ttl);
    }

    private List<String> zset(UnifiedJedis jedis, String stateKey) {
        long count = calls.read("zcard", () -> jedis.zcard(stateKey));
        List<String> entries = new ArrayList<>();
        for (Tuple t : calls.read("zrange", () -> jedis.zrangeWithScores(stateKey, 0, RAW_ENTRIES - 1))) {
            entries.add(t.getElement() + " " + (long) t.getScore());
        }
        if (count > entries.size()) {
            entries.add("... " + (count - entries.size()) + " more (" + count + " in all)");
        }
        return entries;
    }

    /** A text matched literally by a {@code SCAN} pattern. */
    private static String glob(String text) {
        return text.replaceAll("([*?\\[\\]\\\\])", "\\\\$1");
    }
}
