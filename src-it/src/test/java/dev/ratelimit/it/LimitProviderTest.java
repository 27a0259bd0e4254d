package dev.ratelimit.it;

import dev.ratelimit.servlet.LimitProvider;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Limits from the application's {@link LimitProvider} on real Jetty and Valkey: its answer
 * holds the caller, answers are cached, and a provider that throws, is slow or answers nonsense
 * leaves the configured limit without slowing the request past the timeout.
 */
@ExtendWith(ValkeyExtension.class)
class LimitProviderTest {

    private final ValkeyServer valkey;

    LimitProviderTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    @Tag("wall-clock") // bounds a latency: keep such tests few, with generous bounds
    @Test
    void theProvidersLimitHoldsItsCallerAndABadProviderLeavesTheConfiguredOne() throws Exception {
        Map<String, Integer> asked = new ConcurrentHashMap<>();
        AtomicInteger calls = new AtomicInteger();
        LimitProvider database = (rule, key, principal) -> {
            calls.incrementAndGet();
            asked.merge(key, 1, Integer::sum);
            return switch (key) {
                case "header.x-caller:gold" -> OptionalLong.of(6);
                case "header.x-caller:broken" -> throw new IllegalStateException("the database is down");
                case "header.x-caller:slow" -> {
                    try {
                        Thread.sleep(3_000);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    yield OptionalLong.of(50);
                }
                case "header.x-caller:nonsense" -> OptionalLong.of(-3);
                default -> OptionalLong.empty();
            };
        };
        Map<String, String> settings = JettyApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.algorithm", "token-bucket", "ratelimit.rule.api.limit", "2",
                "ratelimit.rule.api.window", "1h", "ratelimit.rule.api.key", "header:X-Caller",
                "ratelimit.limit-provider.timeout", "500ms", "ratelimit.deny-cache.enabled", "false");
        try (JettyApp app = JettyApp.startWithAttributes(settings, Map.of(LimitProvider.class.getName(), database))) {
            assertThat(allowedOf(app, "gold", 9)).as("the provider's limit").isEqualTo(6);
            assertThat(asked.get("header.x-caller:gold")).as("asked once, then cached").isEqualTo(1);
            assertThat(app.get("/", "X-Caller", "gold").headers().firstValue("RateLimit-Policy"))
                    .hasValue("\"api\";q=6;w=3600");
            assertThat(allowedOf(app, "plain", 5)).as("no answer: the configured limit").isEqualTo(2);
            assertThat(allowedOf(app, "broken", 5)).isEqualTo(2);
            assertThat(allowedOf(app, "nonsense", 5)).isEqualTo(2);

            long began = System.nanoTime();
            int slowAllowed = allowedOf(app, "slow", 1);
            Duration first = Duration.ofNanos(System.nanoTime() - began);
            assertThat(slowAllowed).isEqualTo(1);
            // The timeout, 500 ms, is long enough for the quick answers on a busy machine, and the
            // slow one takes 3 s: a request that waited for it would be well past this bound.
            assertThat(first).as("a slow provider does not hold the request past the timeout")
                    .isLessThan(Duration.ofMillis(2_000));
            // Once its answer has come, it is used. The requests that look for it take units too:
            // the configured limit's second, then none until the answer is there.
            int used = 1;
            long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
            HttpResponse<String> late;
            do {
                Thread.sleep(100);
                late = app.get("/", "X-Caller", "slow");
                used += late.statusCode() == 200 ? 1 : 0;
            } while (!late.headers().firstValue("RateLimit-Policy").orElse("").contains("q=50")
                    && System.nanoTime() < deadline);
            assertThat(late.headers().firstValue("RateLimit-Policy")).as("the late answer").hasValue("\"api\";q=50;w=3600");
            assertThat(used).as("units used before the answer came, of the configured 2, and the first under it")
                    .isLessThanOrEqualTo(3);
            assertThat(allowedOf(app, "slow", 60)).as("the late answer, 50, minus those used").isEqualTo(50 - used);
        }
    }

    /**
     * The case: cost 2, and the provider answers 1, which no request of cost 2 can ever
     * fit. Both requests got a 500; the answer must leave the configured limit instead.
     */
    @Test
    void anAnswerBelowTheRulesCostLeavesTheConfiguredLimit() throws Exception {
        LimitProvider tooLow = (rule, key, principal) -> OptionalLong.of(1);
        Map<String, String> settings = JettyApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.algorithm", "sliding-log", "ratelimit.rule.api.limit", "4",
                "ratelimit.rule.api.window", "1h", "ratelimit.rule.api.key", "header:X-Caller",
                "ratelimit.rule.api.cost", "2", "ratelimit.limit-provider.timeout", "2s",
                "ratelimit.deny-cache.enabled", "false");
        try (JettyApp app = JettyApp.startWithAttributes(settings, Map.of(LimitProvider.class.getName(), tooLow))) {
            HttpResponse<String> first = app.get("/", "X-Caller", "a");
            assertThat(first.statusCode()).isEqualTo(200);
            assertThat(first.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=4;w=3600");
            assertThat(app.get("/", "X-Caller", "a").statusCode()).isEqualTo(200);
            assertThat(app.get("/", "X-Caller", "a").statusCode()).as("4 units, 2 a request").isEqualTo(429);
        }
    }

    /**
     * A calendar week in UTC and a plan's week in Pacific/Kiritimati are two windows of one
     * length: the provider is asked for each, and each answer holds its own (one cached answer
     * for both held the rule's callers to the plan's, as the HTTP checker's seed 1036 showed).
     */
    @Test
    void anAnswerIsCachedPerCalendarWindow() throws Exception {
        LimitProvider byZone = (rule, key, principal) ->
                OptionalLong.of(rule.calendar().zone().getId().equals("UTC") ? 3 : 6);
        Map<String, String> settings = JettyApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.algorithm", "fixed-window", "ratelimit.rule.api.limit", "10",
                "ratelimit.rule.api.window", "calendar-week", "ratelimit.rule.api.key", "header:X-Caller",
                "ratelimit.rule.api.plan", "header:X-Plan", "ratelimit.rule.api.plan.pro.limit", "20",
                "ratelimit.rule.api.plan.pro.window", "calendar-week",
                "ratelimit.rule.api.plan.pro.time-zone", "Pacific/Kiritimati",
                "ratelimit.trusted-proxies", "127.0.0.1/32", "ratelimit.limit-provider.timeout", "2s",
                "ratelimit.deny-cache.enabled", "false");
        try (JettyApp app = JettyApp.startWithAttributes(settings, Map.of(LimitProvider.class.getName(), byZone))) {
            assertThat(app.get("/", "X-Caller", "a", "X-Plan", "pro").headers().firstValue("RateLimit-Policy"))
                    .as("the plan's week").hasValueSatisfying(p -> assertThat(p).startsWith("\"api\";q=6;"));
            assertThat(policyOf(app, "a")).as("the rule's own week").startsWith("\"api\";q=3;");
        }
    }

    /**
     * The case: a refresh lowered the limit from 100 to 3, and a caller seen before kept
     * 100 until the cache's answer expired. What is cached is the provider's answer; it is
     * applied to the rule as it is now.
     */
    @Test
    void aRefreshedLimitHoldsForCallersWhoseAnswerIsCached() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        LimitProvider database = (rule, key, principal) -> {
            calls.incrementAndGet();
            return key.equals("header.x-caller:gold") ? OptionalLong.of(6) : OptionalLong.empty();
        };
        EditableConfigSource source = new EditableConfigSource("dynamic", 100);
        source.values.putAll(JettyApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.algorithm", "sliding-log", "ratelimit.rule.api.limit", "100",
                "ratelimit.rule.api.window", "1h", "ratelimit.rule.api.key", "header:X-Caller",
                "ratelimit.refresh", "200ms", "ratelimit.limit-provider.timeout", "2s",
                "ratelimit.deny-cache.enabled", "false"));
        try (JettyApp app = JettyApp.startWithAttributes(source, Map.of(LimitProvider.class.getName(), database))) {
            assertThat(policyOf(app, "seen")).isEqualTo("\"api\";q=100;w=3600");
            assertThat(policyOf(app, "gold")).isEqualTo("\"api\";q=6;w=3600");

            source.values.put("ratelimit.rule.api.limit", "3");
            awaitPolicy(app, "new", "\"api\";q=3;w=3600");
            int asked = calls.get();
            assertThat(policyOf(app, "seen")).as("a caller seen before gets the new limit").isEqualTo("\"api\";q=3;w=3600");
            assertThat(allowedOf(app, "seen", 3)).as("3 - 2 used").isEqualTo(1);
            assertThat(policyOf(app, "gold")).as("the provider's answer still holds").isEqualTo("\"api\";q=6;w=3600");
            assertThat(calls.get()).as("from the cache").isEqualTo(asked);
        }
    }

    /**
     * The case: after one request of a trusted pro caller, the same key's next request
     * without a plan got the pro limit from the cache.
     */
    @Test
    void aCachedAnswerFollowsTheCallersPlanOfTheMoment() throws Exception {
        LimitProvider none = (rule, key, principal) -> OptionalLong.empty();
        Map<String, String> settings = JettyApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.algorithm", "token-bucket", "ratelimit.rule.api.limit", "5",
                "ratelimit.rule.api.window", "1h", "ratelimit.rule.api.key", "header:X-Caller",
                "ratelimit.rule.api.plan", "header:X-Plan", "ratelimit.rule.api.plan.pro.limit", "50",
                "ratelimit.trusted-proxies", "127.0.0.1/32", "ratelimit.limit-provider.timeout", "2s",
                "ratelimit.deny-cache.enabled", "false");
        try (JettyApp app = JettyApp.startWithAttributes(settings, Map.of(LimitProvider.class.getName(), none))) {
            assertThat(app.get("/", "X-Caller", "a", "X-Plan", "pro").headers().firstValue("RateLimit-Policy"))
                    .hasValue("\"api\";q=50;w=3600");
            assertThat(policyOf(app, "a")).as("no plan now: the rule's own").isEqualTo("\"api\";q=5;w=3600");
            assertThat(app.get("/", "X-Caller", "a", "X-Plan", "pro").headers().firstValue("RateLimit-Policy"))
                    .hasValue("\"api\";q=50;w=3600");
        }
    }

    private static String policyOf(JettyApp app, String caller) throws Exception {
        return app.get("/", "X-Caller", caller).headers().firstValue("RateLimit-Policy").orElse("");
    }

    /** Waits for a refresh to apply: until a caller never seen before gets the expected policy. */
    private static void awaitPolicy(JettyApp app, String caller, String expected) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        for (int i = 0; !policyOf(app, caller + i).equals(expected); i++) {
            assertThat(System.nanoTime() - deadline).as("the refresh applied within 30 s").isNegative();
            Thread.sleep(50);
        }
    }

    private static int allowedOf(JettyApp app, String caller, int n) throws Exception {
        int allowed = 0;
        for (int i = 0; i < n; i++) {
            allowed += app.get("/", "X-Caller", caller).statusCode() == 200 ? 1 : 0;
        }
        return allowed;
    }
}
