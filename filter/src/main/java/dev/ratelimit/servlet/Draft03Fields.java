package dev.ratelimit.servlet;

import java.util.List;
import java.util.Map;
import java.util.StringJoiner;

/**
 * The fields of draft-ietf-httpapi-ratelimit-headers-03, for clients written against it. They
 * describe the rule closest to its limit (fewest units remaining), as §"Providing RateLimit
 * fields" requires with several windows:
 * <pre>
 * RateLimit-Limit: 5, 100;w=60, 5;w=900
 * RateLimit-Remaining: 4
 * RateLimit-Reset: 900
 * </pre>
 * {@code RateLimit-Limit} is a Structured Field List: first the expiring limit, a bare Integer,
 * the quota of that rule; then one quota policy per rule, {@code quota;w=seconds}, informative.
 * -03 makes {@code w} required in a quota policy, so a concurrency rule, which has no window,
 * has none (it is still the expiring limit when it is the closest to its limit).
 * {@code RateLimit-Remaining} and {@code RateLimit-Reset} are Integers: units remaining and
 * seconds until more quota is made available (the effective window), rounded up.
 */
final class Draft03Fields implements HeaderVersion {

    /** The one writer: it holds nothing. */
    static final Draft03Fields INSTANCE = new Draft03Fields();

    private Draft03Fields() {
    }

    @Override
    public void write(List<RateLimitHeaders.Entry> entries, Map<String, String> fields) {
        RateLimitHeaders.Entry tightest = RateLimitHeaders.tightest(entries);
        StringJoiner limit = new StringJoiner(", ");
        limit.add(Long.toString(tightest.rule().capacity()));
        for (RateLimitHeaders.Entry entry : entries) {
            if (!entry.rule().algorithm().isConcurrency()) {
                limit.add(entry.rule().capacity() + ";w="
                        + RateLimitHeaders.seconds(entry.quotaWindow()));
            }
        }
        fields.put("RateLimit-Limit", limit.toString());
        fields.put("RateLimit-Remaining", Long.toString(tightest.decision().remaining()));
        fields.put("RateLimit-Reset",
                Long.toString(RateLimitHeaders.seconds(tightest.decision().effectiveWindow())));
    }
}
