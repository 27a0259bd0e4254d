package dev.ratelimit;

import java.util.List;

/**
 * Decides whether an action may happen now, under one or more {@link Rule}s, for a key such
 * as a user, an address or an API key.
 *
 * <p>Implementations are thread-safe. The Valkey-backed one shares its limits between every
 * process pointed at the same Valkey; the in-process one holds them per instance.
 */
public interface RateLimiter extends AutoCloseable {

    /**
     * Takes one unit for the key if the rule allows it.
     *
     * @param rule the rule
     * @param key  what is limited, non-empty
     * @return the rule's decision
     * @throws RateLimitException if the store cannot be reached in time
     */
    default Decision acquire(Rule rule, String key) {
        return acquire(rule, key, 1);
    }

    /**
     * Takes {@code cost} units for the key if the rule allows them.
     *
     * @param rule the rule
     * @param key  what is limited, non-empty
     * @param cost units to take, between 1 and {@link Rule#capacity()}
     * @return the rule's decision
     * @throws IllegalArgumentException if the cost is out of range or the key empty
     * @throws RateLimitException       if the store cannot be reached in time
     */
    default Decision acquire(Rule rule, String key, long cost) {
        return acquireAll(List.of(Claim.of(rule, key, cost))).get(0);
    }

    /**
     * Takes every claim at once, all or nothing: the request is allowed only if every rule
     * allows its claim, and then every rule consumes; if any rejects, no rule
     * consumes (except that rules with {@link Rule#countRejected()} record the attempt). A
     * {@link Rule#shadow()} rule counts as if it were alone but its verdict never rejects. On a
     * single store node this is one round trip and atomic.
     *
     * @param claims the rules, keys and costs, at least one, no rule twice
     * @return every rule's decision, in the order of the claims
     * @throws IllegalArgumentException if the list is empty or names a rule twice
     * @throws RateLimitException       if the store cannot be reached in time
     */
    Decisions acquireAll(List<Claim> claims);

    /**
     * Takes one unit for the key, to be kept or given back once the work's outcome is known.
     *
     * @param rule the rule
     * @param key  what is limited, non-empty
     * @return the reservation; see {@link Reservation}
     * @throws RateLimitException if the store cannot be reached in time
     */
    default Reservation reserve(Rule rule, String key) {
        return reserve(rule, key, 1);
    }

    /**
     * Takes {@code cost} units for the key, to be kept or given back once the work's outcome is
     * known.
     *
     * @param rule the rule
     * @param key  what is limited, non-empty
     * @param cost units to take, between 1 and {@link Rule#capacity()}
     * @return the reservation; see {@link Reservation}
     * @throws IllegalArgumentException if the cost is out of range or the key empty
     * @throws RateLimitException       if the store cannot be reached in time
     */
    default Reservation reserve(Rule rule, String key, long cost) {
        return reserveAll(List.of(Claim.of(rule, key, cost)));
    }

    /**
     * Takes every claim at once, exactly as {@link #acquireAll} does, and says how to give the
     * units back: {@link Reservation#cancel()} after work that must not count (a successful
     * login under a limit of failed ones, a mail that was never sent). Only an allowed
     * reservation has anything to give back; a rejected one keeps what count-rejected rules
     * recorded.
     *
     * <p>The default, for limiters that cannot give units back, keeps them:
     * {@code Reservation.kept(acquireAll(claims))}. Every limiter of this library gives back.
     *
     * @param claims the rules, keys and costs, at least one, no rule twice
     * @return the reservation
     * @throws IllegalArgumentException if the list is empty or names a rule twice
     * @throws RateLimitException       if the store cannot be reached in time
     */
    default Reservation reserveAll(List<Claim> claims) {
        return Reservation.kept(acquireAll(claims));
    }

    /**
     * Whether a request of one unit would be allowed now, taking nothing: as
     * {@link #peek(Rule, String, long)} with a cost of 1.
     *
     * @param rule the rule
     * @param key  what is limited, non-empty
     * @return the key's state: allowed and retry-after as a request would get them
     * @throws IllegalArgumentException if the key is empty
     * @throws NullPointerException     if the rule or the key is null
     * @throws RateLimitException       if the store cannot be reached in time
     */
    default Decision peek(Rule rule, String key) {
        return peek(rule, key, 1);
    }

    /**
     * Whether a request of {@code cost} units would be allowed now, taking nothing. Its
     * {@link Decision#allowed()} and {@link Decision#retryAfter()} are what
     * {@link #acquire(Rule, String, long)} would answer at this moment; its other numbers
     * describe the key as it is, before any take: {@code remaining} is what is left now (an
     * allowed acquire would leave {@code cost} fewer), and for a key with no state yet
     * {@code resetAfter} is zero, the quota being full.
     *
     * @param rule the rule
     * @param key  what is limited, non-empty
     * @param cost units a request would take
     * @return the key's state, with the verdict a request of that cost would get
     * @throws IllegalArgumentException if the key is empty or the cost out of the rule's range
     * @throws NullPointerException     if the rule or the key is null
     * @throws RateLimitException       if the store cannot be reached in time
     */
    Decision peek(Rule rule, String key, long cost);

    /**
     * Forgets everything the rule remembers about the key: its quota is full again.
     *
     * @param rule the rule
     * @param key  what is limited, non-empty
     * @throws RateLimitException if the store cannot be reached in time
     */
    void reset(Rule rule, String key);

    /** Releases connections and threads; the limiter must not be used afterwards. */
    @Override
    void close();
}
