package dev.ratelimit.config;

import java.util.List;

/**
 * The settings are wrong. The message lists every problem found, each naming the property,
 * its value and the rule it breaks, so one deployment attempt shows them all.
 */
public class InvalidSettingsException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The problems, one line each. */
    private final List<String> problems;

    /**
     * An exception for the given problems.
     *
     * @param problems one line per problem, at least one
     */
    public InvalidSettingsException(List<String> problems) {
        super("Invalid rate-limit settings (" + problems.size() + " problem" + (problems.size() == 1 ? "" : "s")
                + "):\n  - " + String.join("\n  - ", problems));
        this.problems = List.copyOf(problems);
    }

    /**
     * The problems, one line each.
     *
     * @return the problems
     */
    public List<String> problems() {
        return problems;
    }
}
