package dev.ratelimit.servlet;

import dev.ratelimit.Rule;
import dev.ratelimit.config.CostSource;
import dev.ratelimit.config.RuleSettings;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletResponse;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * The costs a finished piece of work reported for the rules with a {@code cost-from}: read once,
 * when it is settled, from the response header, request attribute or returned value each names.
 * A cost that is missing or not a whole number of 0 or more is none (-1): the rule keeps what it
 * reserved.
 */
final class ReportedCosts {

    private static final System.Logger LOG = System.getLogger(ReportedCosts.class.getName());
    private static final AtomicBoolean UNREADABLE_LOGGED = new AtomicBoolean();

    /** No cost reported for any rule. */
    static final ToLongFunction<Rule> NONE = rule -> -1;

    private ReportedCosts() {
    }

    /**
     * The costs of a request the filter settles, read now from its complete response.
     *
     * @param rules    the request's rules of this layer
     * @param request  the request (its attributes); may be null after an async completion without one
     * @param response the complete response (its headers); may be null or not HTTP
     * @return the cost by rule, -1 where none was reported
     */
    static ToLongFunction<Rule> of(List<RuleSettings> rules, ServletRequest request, ServletResponse response) {
        return of(rules, name -> response instanceof HttpServletResponse http ? http.getHeader(name) : null,
                name -> request == null ? null : request.getAttribute(name), null);
    }

    /**
     * The costs of a finished piece of work, read now.
     *
     * @param rules     the rules of the layer settled
     * @param header    a response header by name (null: none)
     * @param attribute a request attribute by name (null: none)
     * @param returned  what an annotated method returned, or null
     * @return the cost by rule, -1 where none was reported
     */
    static ToLongFunction<Rule> of(List<RuleSettings> rules, Function<String, Object> header,
                                   Function<String, Object> attribute, Object returned) {
        Map<String, Long> costs = new HashMap<>();
        for (RuleSettings rule : rules) {
            rule.costFrom().ifPresent(source -> costs.put(rule.rule().name(), read(source, header, attribute, returned)));
        }
        if (costs.isEmpty()) {
            return NONE;
        }
        return rule -> costs.getOrDefault(rule.name(), -1L);
    }

    private static long read(CostSource source, Function<String, Object> header, Function<String, Object> attribute,
                             Object returned) {
        Object value = switch (source.kind()) {
            case HEADER -> header.apply(source.name());
            case ATTRIBUTE -> attribute.apply(source.name());
            case RETURNED -> returned;
        };
        long cost = CostSource.cost(value);
        if (cost < 0 && value != null && UNREADABLE_LOGGED.compareAndSet(false, true)) {
            LOG.log(System.Logger.Level.WARNING, "A response reported a cost that is not a whole number of 0 or more in "
                    + source + ": " + value + "; the request keeps the rule's cost (logged once)");
        }
        return cost;
    }
}
