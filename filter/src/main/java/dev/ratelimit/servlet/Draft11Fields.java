package dev.ratelimit.servlet;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The fields of draft-ietf-httpapi-ratelimit-headers-11: Structured Field Lists with one item
 * per rule, the rule's name as a String item.
 * <pre>
 * RateLimit-Policy: "api";q=100;w=60, "jobs";q=20;qu="concurrent-requests"
 * RateLimit: "api";r=57;t=12, "jobs";r=19;t=60
 * </pre>
 * {@code q} is the quota ({@link dev.ratelimit.Rule#capacity()}), {@code w} the seconds in which
 * the rule restores it ({@link dev.ratelimit.Rule#quotaWindow()}); a concurrency rule has the unit
 * {@code qu="concurrent-requests"} and no {@code w}. {@code r} is the units remaining and
 * {@code t} the effective window: the seconds, rounded up, within which no more than {@code r}
 * units can be taken, that is until more quota is made available (none for a concurrency rule
 * holding no lease). No {@code pk}: see the
 * README (a rule's name already tells a client which quota it is in, and a partition key a
 * client cannot predict tells it nothing more).
 */
final class Draft11Fields implements HeaderVersion {

    /** The one writer: it holds nothing. */
    static final Draft11Fields INSTANCE = new Draft11Fields();

    private Draft11Fields() {
    }

    @Override
    public void write(List<RateLimitHeaders.Entry> entries, Map<String, String> fields) {
        // One builder per field, numbers appended as they are: this runs for every response.
        StringBuilder policy = new StringBuilder(32 * entries.size());
        StringBuilder state = new StringBuilder(24 * entries.size());
        for (RateLimitHeaders.Entry entry : entries) {
            if (!state.isEmpty()) {
                policy.append(", ");
                state.append(", ");
            }
            // Rule names are limited to [A-Za-z0-9._-]: nothing to escape in a String item.
            String name = entry.rule().name();
            policy.append('"').append(name).append("\";q=").append(entry.rule().capacity());
            if (entry.rule().algorithm().isConcurrency()) {
                // Units in progress, not per window: the draft's unit for it, and no w.
                policy.append(";qu=\"concurrent-requests\"");
            } else {
                if (entry.quotaUnit() != null) {
                    policy.append(";qu=\"").append(entry.quotaUnit()).append('"');
                }
                policy.append(";w=").append(RateLimitHeaders.seconds(entry.quotaWindow()));
            }
            Duration window = entry.decision().effectiveWindow();
            state.append('"').append(name).append("\";r=").append(entry.decision().remaining());
            // No t where no more quota will come (a concurrency rule holding no lease).
            if (!window.isZero()) {
                state.append(";t=").append(RateLimitHeaders.seconds(window));
            }
        }
        fields.put("RateLimit-Policy", policy.toString());
        fields.put("RateLimit", state.toString());
    }
}
