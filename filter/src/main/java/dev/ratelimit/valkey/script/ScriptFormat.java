package dev.ratelimit.valkey.script;

import dev.ratelimit.Claim;
import dev.ratelimit.RateLimitException;
import dev.ratelimit.Rule;
import dev.ratelimit.internal.Undo;
import dev.ratelimit.internal.Verdicts;

import java.util.ArrayList;
import java.util.List;

/**
 * The limiter library's call and reply format, owned here and documented once, in
 * {@code dispatcher.lua} (the deciding function) and {@code refund.lua}: the arguments of each
 * call, rule by rule, and the replies read back. The counts per rule are written into the
 * library from here ({@link LimiterScript}), as the Lua's {@code RULE_ARGS}, {@code RULE_REPLY}
 * and {@code REFUND_ARGS}.
 */
public final class ScriptFormat {

    /** ARGV values per rule of a deciding call: algorithm, limit, window, burst, cost, count_rejected, shadow, lend, max_delay. */
    static final int RULE_ARGS = 9;
    /** Reply values per rule: allowed, remaining, reset_after, next, wait, undo_where, undo_which, queue. */
    static final int RULE_REPLY = 8;
    /** ARGV values per rule of a refund: algorithm, limit, window, burst, cost, undo_where, undo_which, floor, headroom, lend. */
    static final int REFUND_ARGS = 10;

    // A rule's reply values, by offset from where they start (dispatcher.lua's Reply).
    private static final int ALLOWED = 0;
    private static final int REMAINING = 1;
    private static final int RESET_AFTER = 2;
    private static final int NEXT = 3;
    private static final int WAIT = 4;
    private static final int UNDO_WHERE = 5;
    private static final int UNDO_WHICH = 6;
    private static final int QUEUE = 7;

    private ScriptFormat() {
    }

    /**
     * A deciding call's ARGV: the time, the mode, the call's number, then each rule's values.
     *
     * @param now       the time argument ({@code -1}: the server's clock)
     * @param mode      acquire, peek or record a rejection
     * @param call      the call's number
     * @param claims    the claims, in the order of KEYS
     * @param lending   the units of each claim a local lease takes
     * @param callerNow this machine's time, which places a calendar window's periods
     * @return ARGV
     */
    public static List<String> decide(String now, ScriptMode mode, long call, List<Claim> claims, Lending lending,
                               long callerNow) {
        List<String> args = new ArrayList<>(3 + RULE_ARGS * claims.size());
        args.add(now);
        args.add(mode.argument());
        args.add(Long.toString(call));
        for (Claim claim : claims) {
            rule(args, claim, callerNow);
            args.add(claim.rule().countRejected() ? "1" : "0");
            args.add(claim.rule().shadow() ? "1" : "0");
            args.add(Long.toString(lending.of(claim)));
            args.add(Long.toString(claim.rule().maxDelay().toMillis()));
        }
        return args;
    }

    /**
     * A charge's ARGV ({@link ScriptMode#CHARGE}): as a deciding call's, each rule's cost the
     * units charged, nothing lent.
     *
     * @param now       the time argument
     * @param call      the call's number
     * @param charges   the charges, in the order of KEYS
     * @param callerNow this machine's time
     * @return ARGV
     */
    public static List<String> charge(String now, long call, List<Charge> charges, long callerNow) {
        List<String> args = new ArrayList<>(3 + RULE_ARGS * charges.size());
        args.add(now);
        args.add(ScriptMode.CHARGE.argument());
        args.add(Long.toString(call));
        for (Charge charge : charges) {
            Rule rule = charge.claim().rule();
            rule(args, rule, charge.units(), callerNow);
            args.add(rule.countRejected() ? "1" : "0");
            args.add(rule.shadow() ? "1" : "0");
            args.add("0");
            args.add("0");
        }
        return args;
    }

    /**
     * A refund's ARGV: the time, then each rule's values.
     *
     * @param now       the time argument
     * @param refunds   the refunds, in the order of KEYS
     * @param callerNow this machine's time
     * @return ARGV
     */
    public static List<String> refund(String now, List<Refund> refunds, long callerNow) {
        List<String> args = new ArrayList<>(1 + REFUND_ARGS * refunds.size());
        args.add(now);
        for (Refund refund : refunds) {
            rule(args, refund.claim(), callerNow);
            args.add(Long.toString(refund.taken().undo().where()));
            args.add(Long.toString(refund.taken().undo().which()));
            args.add(Long.toString(refund.floor()));
            args.add(Long.toString(refund.headroom()));
            args.add(Long.toString(refund.lend()));
        }
        return args;
    }

    /**
     * The five values every call takes first for a rule: algorithm, limit, window (see
     * {@link CalendarArgument}), burst, cost.
     */
    private static void rule(List<String> args, Claim claim, long callerNow) {
        rule(args, claim.rule(), claim.cost(), callerNow);
    }

    private static void rule(List<String> args, Rule rule, long cost, long callerNow) {
        args.add(rule.algorithm().id());
        args.add(Long.toString(rule.limit()));
        args.add(CalendarArgument.of(rule, callerNow));
        args.add(Long.toString(rule.burst()));
        args.add(Long.toString(cost));
    }

    /**
     * The deciding function's reply as one answer per claim.
     *
     * @param endpoint what answered, for the error
     * @param claims   the claims asked
     * @param reply    the reply
     * @return the answers, in order
     * @throws RateLimitException when the reply is not in the format
     */
    public static List<Verdicts.Answer> answers(String endpoint, List<Claim> claims, Object reply) {
        if (!(reply instanceof List<?> values) || values.size() != 1 + RULE_REPLY * claims.size()) {
            throw new RateLimitException(endpoint + " sent an unexpected script reply: " + reply, null);
        }
        List<Verdicts.Answer> answers = new ArrayList<>(claims.size());
        for (int i = 0; i < claims.size(); i++) {
            int at = 1 + RULE_REPLY * i;
            answers.add(new Verdicts.Answer(number(endpoint, values.get(at + ALLOWED)) == 1,
                    number(endpoint, values.get(at + REMAINING)), number(endpoint, values.get(at + RESET_AFTER)),
                    number(endpoint, values.get(at + NEXT)), number(endpoint, values.get(at + WAIT)),
                    new Undo(number(endpoint, values.get(at + UNDO_WHERE)), number(endpoint, values.get(at + UNDO_WHICH))),
                    Verdicts.Answer.slotMillis(claims.get(i).rule(), number(endpoint, values.get(at + QUEUE))),
                    number(endpoint, values.get(at + QUEUE))));
        }
        return answers;
    }

    /**
     * The refund function's reply: for each claim, what it gave back.
     *
     * @param endpoint what answered, for the error
     * @param count    how many rules were given back
     * @param reply    the reply
     * @return per rule, in order, what it gave back: 0 for nothing, a bucket's ticks, else 1
     * @throws RateLimitException when the reply is not in the format
     */
    public static long[] givenBack(String endpoint, int count, Object reply) {
        if (!(reply instanceof List<?> values) || values.size() != count) {
            throw new RateLimitException(endpoint + " sent an unexpected refund reply: " + reply, null);
        }
        long[] given = new long[count];
        for (int i = 0; i < count; i++) {
            given[i] = number(endpoint, values.get(i));
        }
        return given;
    }

    private static long number(String endpoint, Object value) {
        if (value instanceof Long number) {
            return number;
        }
        throw new RateLimitException(endpoint + " sent a non-integer in the script reply: " + value, null);
    }
}
