package dev.ratelimit.internal;

import dev.ratelimit.Claim;

import java.util.List;

/**
 * Where a request held for a slot to come stands in its key's queue, as the store that took its
 * units knows it: a bucket gives back only the last request held (see {@code held_back} in
 * {@code bucket.lua}), so requests given back together go the last first by this, never by when
 * each was held here (a thread stalled between the store's answer and the hold would come out of
 * turn).
 *
 * @param rule    the name of the rule that held it
 * @param key     its key
 * @param takenAt when the store took its units, ms on the rule's clock ({@link Undo#where()})
 * @param queue   the debt its take left, in ticks of the rule ({@link Verdicts.Answer#queue()})
 * @param limit   the rule's limit: the ticks refilled per ms
 */
public record QueuePlace(String rule, String key, long takenAt, long queue, long limit) {

    /**
     * The place of the claim a request was held by, if any.
     *
     * @param claims  the request's claims
     * @param answers each claim's answer
     * @return the place, or null when no claim's take was held for a slot
     */
    public static QueuePlace of(List<Claim> claims, List<Verdicts.Answer> answers) {
        for (int i = 0; i < claims.size(); i++) {
            Verdicts.Answer answer = answers.get(i);
            if (answer != null && answer.queue() > 0 && answer.took()) {
                Claim claim = claims.get(i);
                return new QueuePlace(claim.rule().name(), claim.key(), answer.undo().where(), answer.queue(),
                        claim.rule().limit());
            }
        }
        return null;
    }

    /**
     * Orders two places of one queue, the earlier first: by when the debt each take left would
     * have refilled ({@code takenAt + queue / limit}), which grows with every take after it (the
     * store's debt now is the last one's: {@code held_back}).
     *
     * @param other a place in the same queue
     * @return negative when this one is earlier, positive when later
     */
    public int compareInQueue(QueuePlace other) {
        if (limit == other.limit) {
            try {
                long ticks = Math.addExact(Math.multiplyExact(takenAt - other.takenAt, limit), queue - other.queue);
                return Long.signum(ticks);
            } catch (ArithmeticException farApart) {
                // Beyond a long only when the takes are ages apart: the ms alone order them.
                return Long.compare(takenAt, other.takenAt);
            }
        }
        // Taken under a rule edited between them: the store gives back nothing across the edit
        // (see refund in bucket.lua), so any order will do that stays one order.
        return Long.compare(limit, other.limit);
    }
}
