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
import java.util.function.ToLongFunction;

/**
 * The costs a complete response reported for the rules with a {@code cost-from}: read once, when
 * the request is settled, from the response header or request attribute each names. A cost that
 * is missing or not a whole number of 0 or more is none (-1): the rule keeps what it reserved.
 */
final class ReportedCosts {

    private static final System.Logger LOG = System.getLogger(ReportedCosts.class.getName());
    private static final AtomicBoolean UNREADABLE_LOGGED = new AtomicBoolean();

    private ReportedCosts() {
    }

    /**
     * Each rule's reported cost, read now.
     *
     * @param rules    the request's rules of this layer
     * @param request  the request (its attributes); may be null after an async completion without one
     * @param response the complete response (its headers); may be null or not HTTP
     * @return the cost by rule, -1 where none was reported
     */
    static ToLongFunction<Rule> of(List<RuleSettings> rules, ServletRequest request, ServletResponse response) {
        Map<String, Long> costs = new HashMap<>();
        for (RuleSettings rule : rules) {
            rule.costFrom().ifPresent(source -> costs.put(rule.rule().name(), read(source, request, response)));
        }
        if (costs.isEmpty()) {
            return rule -> -1;
        }
        return rule -> costs.getOrDefault(rule.name(), -1L);
    }

    private static long read(CostSource source, ServletRequest request, ServletResponse response) {
        Object value = null;
        if (source.header()) {
            value = response instanceof HttpServletResponse http ? http.getHeader(source.name()) : null;
        } else if (request != null) {
            value = request.getAttribute(source.name());
        }
        long cost = value instanceof Number number ? wholeOrNone(number) : CostSource.parseCost(value == null ? null
                : value.toString());
        if (cost < 0 && value != null && UNREADABLE_LOGGED.compareAndSet(false, true)) {
            LOG.log(System.Logger.Level.WARNING, "A response reported a cost that is not a whole number of 0 or more in "
                    + source + ": " + value + "; the request keeps the rule's cost (logged once)");
        }
        return cost;
    }

    private static long wholeOrNone(Number number) {
        if (number instanceof Double || number instanceof Float) {
            double d = number.doubleValue();
            return d >= 0 && d == Math.rint(d) && d < 1e18 ? (long) d : -1;
        }
        return number.longValue() >= 0 ? number.longValue() : -1;
    }
}
