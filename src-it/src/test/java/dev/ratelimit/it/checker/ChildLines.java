package dev.ratelimit.it.checker;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.RateLimitException;
import dev.ratelimit.Rule;
import dev.ratelimit.UnreadableStateException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What the checker and a limiter in a child JVM ({@link ChildLimiter}, {@link ChildLimiterMain})
 * say to each other, one JSON object per line: the claims with their whole rules, decisions with
 * every field, and what a call threw. Written so that what is read back is equal to what was
 * written: a rule's every component (name, algorithm, limit, window, burst, calendar window,
 * count-rejected, shadow), a decision's durations to the nanosecond (ISO-8601, not rounded to
 * ms), an exception's class and message as the history describes them.
 */
final class ChildLines {

    private ChildLines() {
    }

    /** A rule: every component of {@link Rule}, as the history writes it ({@link Event#ruleJson}). */
    static Json rule(Rule rule) {
        return Event.ruleJson(rule);
    }

    /** A rule read back: every part set, so every one is the one written. */
    static Rule rule(Map<String, Object> fields) {
        return Rule.builder((String) fields.get("name"), Algorithm.fromId((String) fields.get("algorithm")))
                .limit(number(fields, "limit")).window(Duration.ofMillis(number(fields, "windowMs")))
                .calendar(Calendars.parse((String) fields.get("calendar"))).burst(number(fields, "burst"))
                .countRejected((Boolean) fields.get("countRejected")).shadow((Boolean) fields.get("shadow"))
                .maxDelay(Duration.ofMillis(number(fields, "maxDelayMs"))).build();
    }

    static List<Json> claims(List<Claim> claims) {
        return claims.stream().map(c -> Json.object().with("rule", rule(c.rule())).with("key", c.key())
                .with("cost", c.cost())).toList();
    }

    @SuppressWarnings("unchecked")
    static List<Claim> claims(Object list) {
        List<Claim> claims = new ArrayList<>();
        for (Object item : (List<?>) list) {
            Map<String, Object> fields = (Map<String, Object>) item;
            claims.add(Claim.of(rule((Map<String, Object>) fields.get("rule")), (String) fields.get("key"),
                    number(fields, "cost")));
        }
        return claims;
    }

    static Json decision(Decision d) {
        return Json.object().with("rule", d.ruleName()).with("allowed", d.allowed()).with("limit", d.limit())
                .with("remaining", d.remaining()).with("effectiveWindow", d.effectiveWindow().toString())
                .with("resetAfter", d.resetAfter().toString()).with("retryAfter", d.retryAfter().toString())
                .with("delay", d.delay().toString()).with("basis", d.basis().name());
    }

    @SuppressWarnings("unchecked")
    static Decision decision(Object value) {
        Map<String, Object> fields = (Map<String, Object>) value;
        Decision decision = Decision.builder((String) fields.get("rule"), number(fields, "limit"))
                .remaining(number(fields, "remaining")).effectiveWindow(duration(fields, "effectiveWindow"))
                .resetAfter(duration(fields, "resetAfter")).retryAfter(duration(fields, "retryAfter"))
                .delay(duration(fields, "delay")).basis(Decision.Basis.valueOf((String) fields.get("basis"))).build();
        if (decision.allowed() != (Boolean) fields.get("allowed")) {
            throw new IllegalArgumentException("a decision read back disagrees with itself: " + fields);
        }
        return decision;
    }

    static Json decisions(Decisions decisions) {
        return Json.object().with("allowed", decisions.allowed()).with("retryAfter", decisions.retryAfter().toString())
                .with("decisions", decisions.all().stream().map(ChildLines::decision).toList());
    }

    /** Decisions read back as they were made (not recombined by {@link Decisions#of}). */
    @SuppressWarnings("unchecked")
    static Decisions decisions(Object value) {
        Map<String, Object> fields = (Map<String, Object>) value;
        List<Decision> decisions = ((List<Object>) fields.get("decisions")).stream().map(ChildLines::decision).toList();
        return Decisions.of((Boolean) fields.get("allowed"), decisions, duration(fields, "retryAfter"));
    }

    /** What a call threw: its class's simple name, whether it is a RateLimitException, its message. */
    static Json thrown(Throwable e) {
        return Json.object().with("class", e.getClass().getSimpleName())
                .with("rateLimit", e instanceof RateLimitException).with("message", e.getMessage())
                .with("unreadable", e instanceof UnreadableStateException u ? u.ruleName() : null);
    }

    /**
     * What a call in the child threw, to be thrown here: an {@link UnreadableStateException} as
     * itself (the history reads its rule), another {@code RateLimitException} as one that keeps
     * the child's class name ({@link ChildLimiter.Thrown}), anything else as a RuntimeException
     * that keeps it too ({@link ChildLimiter.ThrownOther}), which the contract check then flags
     * by that name as it would the same thrown here.
     */
    static RuntimeException thrown(Map<String, Object> fields) {
        String name = (String) fields.get("class");
        String message = (String) fields.get("message");
        if (fields.get("unreadable") != null) {
            return new UnreadableStateException((String) fields.get("unreadable"), message);
        }
        if (Boolean.TRUE.equals(fields.get("rateLimit"))) {
            return new ChildLimiter.Thrown(name, message);
        }
        return new ChildLimiter.ThrownOther(name, message);
    }

    static long number(Map<String, Object> fields, String name) {
        return ((Number) fields.get(name)).longValue();
    }

    private static Duration duration(Map<String, Object> fields, String name) {
        return Duration.parse((String) fields.get(name));
    }
}
