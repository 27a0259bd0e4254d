package dev.ratelimit.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Which responses a rule counts, from {@code count-when=status:…} or
 * {@code refund-when=status:…}: the request's units are taken before the application runs,
 * and given back after the response when its status says it must not count.
 */
public final class OutcomeCondition {

    private static final String PREFIX = "status:";

    /** True for {@code count-when} (only these statuses count), false for {@code refund-when}. */
    private final boolean countOnly;
    /** The statuses listed, 100 to 599: {@code statuses[s - 100]}. */
    private final boolean[] statuses;
    /** The setting's value, for messages. */
    private final String text;

    private OutcomeCondition(boolean countOnly, boolean[] statuses, String text) {
        this.countOnly = countOnly;
        this.statuses = statuses;
        this.text = text;
    }

    /**
     * Parses a value: {@code status:} and a comma-separated list of statuses ({@code 401}) and
     * status classes ({@code 4xx}).
     *
     * @param countOnly true for {@code count-when}, false for {@code refund-when}
     * @param value     the setting's value
     * @param problems  where each problem goes, as a sentence naming the bad part
     * @return the condition, or empty when the value has a problem
     */
    static Optional<OutcomeCondition> parse(boolean countOnly, String value, List<String> problems) {
        String trimmed = value.trim();
        if (!trimmed.toLowerCase(Locale.ROOT).startsWith(PREFIX)) {
            problems.add("must be status: and a list of statuses and classes, e.g. status:401,403 or status:5xx");
            return Optional.empty();
        }
        boolean[] statuses = new boolean[500];
        List<String> bad = new ArrayList<>();
        String list = trimmed.substring(PREFIX.length());
        for (String part : list.split(",", -1)) {
            String item = part.trim().toLowerCase(Locale.ROOT);
            if (item.matches("[1-5]xx")) {
                int from = (item.charAt(0) - '0') * 100;
                for (int s = from; s < from + 100; s++) {
                    statuses[s - 100] = true;
                }
            } else if (item.matches("[1-5][0-9][0-9]")) {
                statuses[Integer.parseInt(item) - 100] = true;
            } else {
                bad.add(part.trim().isEmpty() ? "(empty)" : part.trim());
            }
        }
        if (!bad.isEmpty()) {
            problems.add("has " + String.join(", ", bad) + ": each item must be a status from 100 to 599 or a class "
                    + "1xx to 5xx");
            return Optional.empty();
        }
        return Optional.of(new OutcomeCondition(countOnly, statuses, trimmed));
    }

    /**
     * Whether a response with this status must not count: its units are given back.
     *
     * @param status the response's status
     * @return true to give the units back
     */
    public boolean givesBack(int status) {
        boolean listed = status >= 100 && status <= 599 && statuses[status - 100];
        return countOnly != listed;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof OutcomeCondition that && countOnly == that.countOnly
                && java.util.Arrays.equals(statuses, that.statuses);
    }

    @Override
    public int hashCode() {
        return 31 * Boolean.hashCode(countOnly) + java.util.Arrays.hashCode(statuses);
    }

    @Override
    public String toString() {
        return (countOnly ? "count-when=" : "refund-when=") + text;
    }
}
