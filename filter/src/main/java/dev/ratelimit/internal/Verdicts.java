package dev.ratelimit.internal;

import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.Rule;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * Turns the per-rule answers of a limiter (its script's reply, or the in-process twin's) into
 * {@link Decisions}, the same way for every limiter.
 */
public final class Verdicts {

    private Verdicts() {
    }

    /**
     * One rule's raw answer.
     *
     * @param allowed     the rule's own verdict
     * @param remaining   units left
     * @param resetMillis time until the quota is full again
     * @param nextMillis  time until more quota is made available (the effective window), at
     *                    least 1; 0 when none will be, the quota being full
     * @param waitMillis  time until a request of the same cost would be allowed by the state
     *                    as it is now (after any write): 0 if it would be now
     * @param undo        what the rule wrote, for giving it back; {@link Undo#NONE} when it
     *                    wrote nothing
     * @param delayMillis how long after now the slot the rule allowed the request for comes
     *                    (a bucket's {@link Rule#maxDelay()}); 0: now
     * @param queue       for a request a bucket allowed for a slot to come, the debt its take
     *                    left, in ticks (see {@code held_back} in {@code bucket.lua}), which its
     *                    refund is given; 0 otherwise
     */
    public record Answer(boolean allowed, long remaining, long resetMillis, long nextMillis, long waitMillis,
                         Undo undo, long delayMillis, long queue) {

        /** An answer of a rule that wrote nothing. */
        public Answer(boolean allowed, long remaining, long resetMillis, long nextMillis, long waitMillis) {
            this(allowed, remaining, resetMillis, nextMillis, waitMillis, Undo.NONE, 0, 0);
        }

        /** An answer for a slot now. */
        public Answer(boolean allowed, long remaining, long resetMillis, long nextMillis, long waitMillis, Undo undo) {
            this(allowed, remaining, resetMillis, nextMillis, waitMillis, undo, 0, 0);
        }

        /**
         * The slot of a bucket's take that left {@code queue} ticks of debt: when that debt has
         * refilled down to the bucket, in ms from the take, rounded up (never early).
         *
         * @param rule  the bucket's rule
         * @param queue the debt the take left, in ticks; 0 for none held
         * @return ms; 0 when the take fits the bucket now
         */
        public static long slotMillis(Rule rule, long queue) {
            long capacity = rule.burst() * rule.window().toMillis();
            if (queue <= capacity) {
                return 0;
            }
            return Math.floorDiv(queue - capacity + rule.limit() - 1, rule.limit());
        }

        /**
         * Whether the rule took units that can be given back.
         *
         * @return true when it wrote
         */
        public boolean took() {
            return undo.wrote();
        }
    }

    /**
     * The claims of an allowed request whose units may be given back: those whose rule allowed
     * and took units and that {@code which} accepts. (A rejected request gets a reservation with
     * nothing to give back: what its count-rejected rules recorded stands. So does the attempt a
     * shadow count-rejected rule recorded while rejecting an allowed request: recording it may
     * have pushed out units of allowed requests, a full sliding log keeping its newest
     * {@code limit} entries, so giving it back would give those back.)
     *
     * @param claims  the claims, in order
     * @param answers their answers
     * @param which   which rules to give back
     * @return the indexes of the claims to give back
     */
    public static List<Integer> toGiveBack(List<Claim> claims, List<Answer> answers, Predicate<Rule> which) {
        List<Integer> indexes = new ArrayList<>();
        for (int i = 0; i < claims.size(); i++) {
            if (answers.get(i).allowed() && answers.get(i).took() && which.test(claims.get(i).rule())) {
                indexes.add(i);
            }
        }
        return indexes;
    }

    /**
     * The request's decisions.
     *
     * <p>A rejected request's retry-after is the longest wait of its enforcing rules, including
     * those whose own verdict was to allow but which the rejection charged (count-rejected):
     * the moment the same request, with no other traffic, is allowed by every rule.
     *
     * @param claims            the claims, in order
     * @param answers           one answer per claim, in the same order
     * @param rejectedElsewhere whether the request is rejected whatever these answers say (a
     *                          cluster slot group that rejected it)
     * @return the decisions
     */
    public static Decisions combine(List<Claim> claims, List<Answer> answers, boolean rejectedElsewhere) {
        List<Decision> decisions = new ArrayList<>(claims.size());
        boolean allowed = !rejectedElsewhere;
        for (int i = 0; i < claims.size(); i++) {
            allowed &= claims.get(i).rule().shadow() || answers.get(i).allowed();
        }
        long wait = 0;
        for (int i = 0; i < claims.size(); i++) {
            Rule rule = claims.get(i).rule();
            Answer answer = answers.get(i);
            Duration reset = Duration.ofMillis(answer.resetMillis());
            decisions.add(Decision.builder(rule.name(), rule.limit()).remaining(answer.remaining()).resetAfter(reset)
                    .retryAfter(answer.allowed() ? Duration.ZERO : Duration.ofMillis(Math.max(1, answer.waitMillis())))
                    // The slot the rule gives (taken only when the whole request is allowed).
                    .delay(answer.allowed() ? Duration.ofMillis(answer.delayMillis()) : Duration.ZERO)
                    .effectiveWindow(effectiveWindow(rule, answer)).build());
            if (!rule.shadow()) {
                wait = Math.max(wait, answer.waitMillis());
            }
        }
        // A rejection decided elsewhere may meet states that all allow by now: still never early.
        return Decisions.of(allowed, decisions, allowed ? Duration.ZERO : Duration.ofMillis(Math.max(1, wait)));
    }

    /**
     * An allowed decision the shared store made.
     *
     * @param rule       the rule's name
     * @param limit      the rule's limit
     * @param remaining  units left now
     * @param resetAfter time until the quota is full again, also the effective window
     * @return the decision
     */
    public static Decision allowed(String rule, long limit, long remaining, Duration resetAfter) {
        return Decision.builder(rule, limit).remaining(remaining).resetAfter(resetAfter).build();
    }

    /**
     * A rejection the shared store made, its effective window the shorter of reset and retry.
     *
     * @param rule       the rule's name
     * @param limit      the rule's limit
     * @param remaining  units left now
     * @param resetAfter time until the quota is full again
     * @param retryAfter time until a request of the same cost would be allowed, positive
     * @return the decision
     */
    public static Decision rejected(String rule, long limit, long remaining, Duration resetAfter,
                                    Duration retryAfter) {
        if (retryAfter.isZero() || retryAfter.isNegative()) {
            throw new IllegalArgumentException("invalid decision for rule '" + rule + "': rejected with retry after "
                    + retryAfter);
        }
        return Decision.builder(rule, limit).remaining(remaining).resetAfter(resetAfter).retryAfter(retryAfter)
                .build();
    }

    /**
     * A decision the store could not make, answered by a failure policy that lets the request
     * pass: its numbers say nothing.
     *
     * @param rule  the rule's name
     * @param limit the rule's limit
     * @return an allowed decision whose basis is {@link Decision.Basis#SKIPPED}
     */
    public static Decision skipped(String rule, long limit) {
        return Decision.builder(rule, limit).remaining(limit).basis(Decision.Basis.SKIPPED).build();
    }

    /**
     * A decision the store could not make, answered by a failure policy that refuses.
     *
     * @param rule       the rule's name
     * @param limit      the rule's limit
     * @param retryAfter when to try again, positive
     * @return a rejected decision whose basis is {@link Decision.Basis#UNAVAILABLE}
     */
    public static Decision unavailable(String rule, long limit, Duration retryAfter) {
        return Decision.builder(rule, limit).retryAfter(retryAfter).effectiveWindow(Duration.ZERO)
                .basis(Decision.Basis.UNAVAILABLE).build();
    }

    /**
     * A decision as made by the in-process fallback.
     *
     * @param decision the fallback limiter's decision
     * @return the same numbers with the basis {@link Decision.Basis#LOCAL}
     */
    public static Decision fromFallback(Decision decision) {
        return decision.toBuilder().basis(Decision.Basis.LOCAL).build();
    }

    /**
     * The time within which no more than the remaining units can be taken: until more quota
     * comes, or, with the quota full, the time the rule takes to restore it all (none for a
     * concurrency rule, whose quota is not per window).
     */
    private static Duration effectiveWindow(Rule rule, Answer answer) {
        if (answer.nextMillis() > 0) {
            return Duration.ofMillis(answer.nextMillis());
        }
        return rule.algorithm().isConcurrency() ? Duration.ZERO : rule.quotaWindow();
    }
}
