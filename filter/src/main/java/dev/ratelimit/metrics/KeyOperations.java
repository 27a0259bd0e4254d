package dev.ratelimit.metrics;

/**
 * What a rule's MBean asks of the filter for its {@code inspect} and {@code reset} operations:
 * the filter knows the rules, their keys and the limiter; the MBeans only the rules' names.
 */
public interface KeyOperations {

    /** Until the filter has started: every operation says so. */
    KeyOperations NONE = new KeyOperations() {
        @Override
        public String inspect(String rule, String keyValues) {
            throw new IllegalStateException("the rate-limit filter has not started");
        }

        @Override
        public String reset(String rule, String keyValues) {
            throw new IllegalStateException("the rate-limit filter has not started");
        }
    };

    /**
     * A key's state in words, consuming nothing.
     *
     * @param rule      the rule's name
     * @param keyValues the key's values (see {@link RuleMetricsMBean#inspect})
     * @return the state, one fact per line
     * @throws IllegalArgumentException naming the problem (an unknown rule, a wrong number of
     *                                  values, the store unreachable), with no cause attached:
     *                                  a JMX console may not have our classes
     */
    String inspect(String rule, String keyValues);

    /**
     * Forgets a key's state and says what it was.
     *
     * @param rule      the rule's name
     * @param keyValues the key's values (see {@link RuleMetricsMBean#inspect})
     * @return what was removed
     * @throws IllegalArgumentException as {@link #inspect}
     */
    String reset(String rule, String keyValues);
}
