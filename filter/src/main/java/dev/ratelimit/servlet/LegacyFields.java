package dev.ratelimit.servlet;

import java.util.List;
import java.util.Map;

/**
 * The pre-standard {@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining} and
 * {@code X-RateLimit-Reset} (seconds from now, rounded up). They describe one rule only, the
 * one with the fewest units remaining: that is the one a client runs into first.
 */
final class LegacyFields implements HeaderVersion {

    /** The one writer: it holds nothing. */
    static final LegacyFields INSTANCE = new LegacyFields();

    private LegacyFields() {
    }

    @Override
    public void write(List<RateLimitHeaders.Entry> entries, Map<String, String> fields) {
        RateLimitHeaders.Entry tightest = RateLimitHeaders.tightest(entries);
        fields.put("X-RateLimit-Limit", Long.toString(tightest.rule().capacity()));
        fields.put("X-RateLimit-Remaining", Long.toString(tightest.decision().remaining()));
        fields.put("X-RateLimit-Reset",
                Long.toString(RateLimitHeaders.seconds(tightest.decision().effectiveWindow())));
    }
}
