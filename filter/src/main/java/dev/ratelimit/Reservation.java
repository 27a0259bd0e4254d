package dev.ratelimit;

import java.util.List;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;

/**
 * Units taken for a piece of work whose outcome decides whether they count: the answer of
 * {@link RateLimiter#reserveAll}. The units are taken before the work, exactly as
 * {@link RateLimiter#acquireAll} takes them, so concurrent work cannot all pass the check
 * before any of it is counted; once the outcome is known, {@link #commit()} keeps them and
 * {@link #cancel()} gives them back.
 *
 * <pre>{@code
 * Reservation mail = limiter.reserve(resetMails, "user:" + userId);
 * if (!mail.allowed()) {
 *     return tooManyRequests(mail.decisions().retryAfter());
 * }
 * try {
 *     mailer.send(resetLink(userId));
 *     mail.commit();           // a mail that went out counts
 * } catch (MailException e) {
 *     mail.cancel();           // one that never left does not
 *     throw e;
 * }
 * }</pre>
 *
 * <p>A reservation is settled once: the first {@code commit} or {@code cancel} decides, later
 * ones do nothing, also when the first one threw because the store could not be reached (the
 * units it would have given back stay counted; a concurrency rule's permit is released once the
 * store answers again, or times out). One never settled keeps its units, as a commit would. A
 * {@link Algorithm#CONCURRENCY} rule's units are leases on work in progress: settling the
 * reservation either way releases them (the work is over), and one never settled holds them
 * until the rule's lease timeout. Giving back is exact
 * per algorithm: a token bucket or GCRA gets its units back (never more than its burst; while
 * its debt is beyond its burst, with requests held for slots to come ({@link Rule#maxDelay()}),
 * only the last one held gives back, all of it, and any other give-back nothing: its slot
 * passes unused, as a later request given it would pass beside the ones held), a
 * sliding log loses exactly the entries this reservation added, a fixed window or sliding
 * window counter has its count lowered (never below zero) if the window charged is still the
 * current one; a window that has rolled over is left as it is. Only the reservation's own units
 * are given back: after a reset, or an edit that dropped them, units taken since are never given
 * back in their place. Thread-safe.
 *
 * <p>An interface so that a {@link RateLimiter} of one's own can answer with its own;
 * {@link #kept} is one that gives nothing back.
 */
public interface Reservation {

    /**
     * A reservation with nothing to give back: a rejected request, or one decided by a
     * failure policy, or by a limiter that cannot give units back. Settled once, as any.
     *
     * @param decisions the decisions
     * @return the reservation; {@link #cancel()} gives nothing back
     */
    static Reservation kept(Decisions decisions) {
        return new KeptReservation(decisions);
    }

    /**
     * Every rule's decision, as {@link RateLimiter#acquireAll} would have returned them.
     *
     * @return the decisions
     */
    Decisions decisions();

    /**
     * Whether the work may go ahead.
     *
     * @return {@code decisions().allowed()}
     */
    default boolean allowed() {
        return decisions().allowed();
    }

    /**
     * Keeps the units: the work counts. Releases the permits of concurrency rules.
     *
     * @return true if this settled the reservation, false if it was settled already
     * @throws RateLimitException if a permit is to be released and the store cannot be reached
     *                            in time (a reservation from the resilient limiter never
     *                            throws; the Valkey limiter releases the permit once Valkey
     *                            answers again, or it times out)
     */
    boolean commit();

    /**
     * Keeps the units with each rule's cost as the work turned out: a cost known only after the
     * work (the tokens a model used, the rows of an export, the bytes sent). The reservation's
     * cost was the estimate, what the work had to have left to start; a rule whose actual cost
     * is less gets the difference back, as {@link #cancel()} gives back, and one whose actual
     * cost is more is charged the rest whatever it has left: the key goes into debt, refused
     * until refill (token bucket, GCRA) or the window's end (fixed window, sliding window
     * counter, where the charge counts in the window of its own time) pays it, up to eight
     * full quotas of debt; more is dropped and reported. A sliding log gets back what its cost
     * left unused but is never charged more (its memory would grow with the debt); a concurrency
     * rule's permit is released whatever its cost. Settles the reservation as {@link #commit()}
     * does, at most once: a charge whose reply is lost is not sent again (it may have counted).
     *
     * <pre>{@code
     * Reservation call = limiter.reserve(tokensPerDay, "tenant:" + tenant, 500); // at least 500 left
     * Completion answer = model.complete(prompt);
     * call.commit(answer.tokensUsed());
     * }</pre>
     *
     * @param actualCost each rule's actual cost in its units, 0 or more; a negative value keeps
     *                   what was reserved for that rule
     * @return true if this settled the reservation, false if it was settled already
     * @throws RateLimitException if the store cannot be reached in time (a reservation from the
     *                            resilient limiter never throws: a charge it cannot make follows
     *                            the rule's failure policy and is reported)
     * @throws UnsupportedOperationException if this reservation cannot settle by a cost (one of
     *                                       a limiter of one's own that does not implement it)
     */
    default boolean commit(ToLongFunction<Rule> actualCost) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot settle by an actual cost");
    }

    /**
     * Keeps the units with every rule's cost as the work turned out: {@code commit(rule ->
     * actualCost)} (see {@link #commit(ToLongFunction)}).
     *
     * @param actualCost the work's actual cost, 0 or more
     * @return true if this settled the reservation, false if it was settled already
     */
    default boolean commit(long actualCost) {
        if (actualCost < 0) {
            throw new IllegalArgumentException("actualCost must be 0 or more, not " + actualCost);
        }
        return commit(rule -> actualCost);
    }

    /**
     * Gives back every unit taken: the work does not count.
     *
     * @return the names of the rules that gave units back; none if the reservation was settled
     *         already or took nothing
     * @throws RateLimitException if the store cannot be reached in time (a reservation from
     *                            the resilient limiter never throws: it drops the refund)
     */
    default List<String> cancel() {
        return cancel(rule -> true);
    }

    /**
     * Gives back the units of some rules and keeps the others'; settles the reservation, so the
     * permits of concurrency rules are released whichever rules are named.
     *
     * @param rules the rules to give back
     * @return the names of the rules that gave units back, a concurrency rule whose permit was
     *         released among them; none if the reservation was settled already
     * @throws RateLimitException if the store cannot be reached in time (a reservation from
     *                            the resilient limiter never throws: it drops the refund)
     */
    List<String> cancel(Predicate<Rule> rules);
}
