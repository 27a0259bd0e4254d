package dev.ratelimit.servlet;

import dev.ratelimit.Decision;
import dev.ratelimit.RateLimitException;
import dev.ratelimit.config.OperatorKeys;
import dev.ratelimit.config.RuleSettings;
import dev.ratelimit.metrics.KeyOperations;
import dev.ratelimit.valkey.KeyInspector;
import dev.ratelimit.valkey.KeyState;

import java.util.function.Supplier;

/**
 * The rules' MBean operations {@code inspect} and {@code reset}, on the settings requests are
 * decided by now (a refresh included): the key built from typed values as from a request, the
 * state read by the Valkey inspector (with this instance's local leases), or by the in-process
 * limiter's peek without Valkey; a reset through the decision path, so that this instance's
 * fallback, deny cache and local leases forget the key too.
 */
final class OperatorConsole implements KeyOperations {

    private final Supplier<RunningFilter.Active> active;
    /** The Valkey inspector: null when the rules are kept in process; throws while Valkey is not reached yet. */
    private final Supplier<KeyInspector> inspector;

    OperatorConsole(Supplier<RunningFilter.Active> active, Supplier<KeyInspector> inspector) {
        this.active = active;
        this.inspector = inspector;
    }

    private record Target(RunningFilter.Active active, RuleSettings rule, String key) {
    }

    @Override
    public String inspect(String rule, String keyValues) {
        return answered(() -> describe(target(rule, keyValues)));
    }

    @Override
    public String reset(String rule, String keyValues) {
        return answered(() -> {
            Target target = target(rule, keyValues);
            // Valkey down is when this instance's fallback decides: its state must be forgotten
            // then too, so neither failing to read nor failing to remove stops the reset.
            String before;
            try {
                before = describe(target);
            } catch (RateLimitException e) {
                before = "  (could not be read: " + e.getMessage() + ")";
            }
            try {
                target.active().limiter().reset(target.rule().rule(), target.key());
            } catch (RateLimitException e) {
                return "forgot key " + target.key() + " of rule " + rule + " in this instance (its fallback, deny cache"
                        + " and local leases), but not in Valkey, which did not answer: " + e.getMessage()
                        + "; reset again once Valkey answers";
            }
            return "removed the state of rule " + rule + " for key " + target.key() + "; just before:\n" + before;
        });
    }

    private Target target(String rule, String keyValues) {
        RunningFilter.Active now = active.get();
        if (now == null) {
            throw new IllegalStateException("the rate-limit filter has not started");
        }
        RuleSettings settings = now.settings().rule(rule)
                .orElseThrow(() -> new IllegalArgumentException("rule '" + rule + "' is no longer in the settings"));
        return new Target(now, settings, OperatorKeys.keyOf(settings, keyValues, now.settings().ipv6Prefix()));
    }

    private String describe(Target target) {
        KeyInspector valkey = inspector.get();
        if (valkey != null) {
            KeyState state = valkey.inspect(target.rule().rule(), target.key(), target.rule().cost());
            return state.describe();
        }
        Decision d = target.active().limiter().peek(target.rule().rule(), target.key(), target.rule().cost());
        return "rule " + d.ruleName() + ", key " + target.key() + " (kept in this process: no Valkey)\n  "
                + (d.allowed() ? "allowed now" : target.rule().rule().shadow()
                        ? "over the limit now, yet allowed: a shadow rule only counts"
                        : "rejected now, retry after " + d.retryAfter().toMillis() + " ms") + ": "
                + d.remaining() + " of " + d.limit() + " remaining, full again in " + d.resetAfter().toMillis() + " ms";
    }

    /**
     * The answer, or the problem as an exception a JMX console can show: a JDK type, no cause
     * (the console may not have the limiter's classes to read one).
     */
    private static String answered(Supplier<String> operation) {
        try {
            return operation.get();
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(e.getMessage());
        }
    }
}
