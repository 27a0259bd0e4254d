package dev.ratelimit.it.checker;

import dev.ratelimit.internal.Verdicts;
import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.Rule;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What the history says of one request over HTTP, from what the filter reported and the client
 * saw: the decisions, and the rule the application's provider makes of a rule.
 */
final class HttpDecisions {

    /** A rejection whose Retry-After the client did not see: taken as never early. */
    private static final long UNSEEN_RETRY_AFTER_MILLIS = 10L * 86_400_000;

    private HttpDecisions() {
    }

    /**
     * The decisions as the filter's listener reported them for the request, with the numbers of
     * its RateLimit field and Retry-After; null when it reported none (it decided nothing).
     */
    static Decisions of(List<Claim> claims, HttpApp.Trace trace, HttpCall.Seen seen) {
        List<String> events = List.copyOf(trace.events);
        if (events.isEmpty()) {
            return null;
        }
        Map<String, long[]> numbers = new HashMap<>();
        String field = seen.headers().get("ratelimit");
        if (field != null) {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"([^\"]+)\";r=(\\d+);t=(\\d+)").matcher(field);
            while (m.find()) {
                numbers.put(m.group(1), new long[] {Long.parseLong(m.group(2)), Long.parseLong(m.group(3))});
            }
        }
        long retryAfter = UNSEEN_RETRY_AFTER_MILLIS;
        String header = seen.headers().get("retry-after");
        if (header != null) {
            retryAfter = Long.parseLong(header) * 1000;
        }
        List<Decision> list = new ArrayList<>();
        for (Claim claim : claims) {
            String name = claim.rule().name();
            long[] rt = numbers.getOrDefault(name, new long[] {0, 0});
            // The field's t is the effective window, rounded up to whole seconds: it certainly ends
            // after (t - 1) s and 1 ms (the time to a full quota is not sent).
            Duration t = Duration.ofMillis(Math.max(0, rt[1] * 1000 - 999));
            if (events.contains(name + " REJECTED")) {
                list.add(Verdicts.rejected(name, claim.rule().limit(), rt[0], t, Duration.ofMillis(retryAfter))
                        .toBuilder().effectiveWindow(t).build());
            } else if (events.contains(name + " ALLOWED") && !events.contains(name + " FALLBACK")) {
                list.add(Verdicts.allowed(name, claim.rule().limit(), rt[0], t).toBuilder().effectiveWindow(t).build());
            } else {
                list.add(Verdicts.skipped(name, claim.rule().limit()));
            }
        }
        return Decisions.of(claims, list);
    }

    /**
     * The rule the provider's answer, as the filter's cache holds it, makes of a rule: the same
     * rule for no answer or one equal to its limit; else its limit, the burst scaled with it;
     * the rule itself when the request's cost does not fit in the result.
     */
    static Rule provided(HttpProvider provider, Rule rule, String key, long cost) {
        Long answer = provider.asked.get(HttpProvider.question(rule, key));
        if (answer == null || answer == HttpProvider.NONE || answer == rule.limit()) {
            return rule;
        }
        long burst = !rule.algorithm().hasBurst() ? answer
                : Math.max(1, (long) Math.ceil((double) rule.burst() * answer / rule.limit()));
        // Every part named, not rule.toBuilder(): the model must not lean on the code it judges.
        Rule result = Rule.builder(rule.name(), rule.algorithm()).limit(answer).window(rule.window())
                .calendar(rule.calendar()).burst(burst).countRejected(rule.countRejected()).shadow(rule.shadow())
                .build();
        return cost > result.capacity() ? rule : result;
    }
}
