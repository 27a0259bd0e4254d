package dev.ratelimit.servlet;

import dev.ratelimit.Decision;
import dev.ratelimit.Rule;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The problem body's members and its JSON escaping. */
class ProblemDetailsTest {

    @Test
    void aQuotaExceededBodyHasTheDraftsMembersAndTheFiltersOwn() {
        String json = new ProblemDetails(Rejections.QUOTA_EXCEEDED, "Too Many Requests", 429,
                "The rate limit 'login' is exhausted; retry in 900 s.", List.of("api", "login"), "login", 900).toJson();
        assertThat(json).isEqualTo("{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\","
                + "\"title\":\"Too Many Requests\",\"status\":429,"
                + "\"detail\":\"The rate limit 'login' is exhausted; retry in 900 s.\","
                + "\"violated-policies\":[\"api\",\"login\"],\"rule\":\"login\",\"retryAfter\":900}");
    }

    /**
     * The 429's problem is made again only when its rules or its wait differ from the last one
     * made: each refusal still names its own.
     */
    @Test
    void eachRefusalNamesItsOwnRulesAndWait() {
        String[][] refusals = {{"api", "60"}, {"api", "60"}, {"api", "59"}, {"login", "59"}, {"api", "59"},
            {"api,login", "59"}, {"login,api", "59"}, {"api", "59"}};
        for (String[] refusal : refusals) {
            List<String> names = List.of(refusal[0].split(","));
            Duration wait = Duration.ofSeconds(Long.parseLong(refusal[1]));
            List<RateLimitHeaders.Entry> entries = new ArrayList<>();
            for (String name : names) {
                Rule rule = Rule.tokenBucket(name, 10, Duration.ofMinutes(1));
                entries.add(new RateLimitHeaders.Entry(rule, Decision.builder(name, 10).remaining(0).retryAfter(wait)
                        .build(), rule.quotaWindow(0), null));
            }
            ProblemDetails problem = Rejections.quotaExceeded(entries, wait);
            assertThat(problem.violated()).isEqualTo(names);
            assertThat(problem.rule()).isEqualTo(names.get(0));
            assertThat(problem.retryAfter()).isEqualTo(wait.toSeconds());
            assertThat(problem.json()).contains("\"detail\":\"The rate limit '" + names.get(0) + "' is exhausted; retry in "
                    + wait.toSeconds() + " s.\"", "\"violated-policies\":[\"" + String.join("\",\"", names) + "\"]");
        }
    }

    /**
     * Two refusals by the same rules in the same whole second may wait for different rules: the
     * one whose own wait is the longest, to the millisecond.
     */
    @Test
    void theRuleWaitedForIsTheRefusalsOwnWithinOneSecond() {
        long[][] waits = {{59_500, 59_200}, {59_200, 59_500}, {59_500, 59_200}};
        for (long[] wait : waits) {
            List<RateLimitHeaders.Entry> entries = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                String name = i == 0 ? "api" : "login";
                Rule rule = Rule.tokenBucket(name, 10, Duration.ofMinutes(1));
                entries.add(new RateLimitHeaders.Entry(rule, Decision.builder(name, 10).remaining(0)
                        .retryAfter(Duration.ofMillis(wait[i])).build(), rule.quotaWindow(0), null));
            }
            ProblemDetails problem = Rejections.quotaExceeded(entries,
                    Duration.ofMillis(Math.max(wait[0], wait[1])));
            String waited = wait[0] > wait[1] ? "api" : "login";
            assertThat(problem.rule()).isEqualTo(waited);
            assertThat(problem.json()).contains("The rate limit '" + waited + "' is exhausted; retry in 60 s.",
                    "\"rule\":\"" + waited + "\"");
        }
    }

    @Test
    void everyStringIsEscaped() {
        assertThat(ProblemDetails.string("a\"b\\c\nd\u0001é")).isEqualTo("\"a\\\"b\\\\c\\nd\\u0001é\"");
        String json = new ProblemDetails("about:blank", "t\"", 503, "d\\", List.of("x\ty"), "r", 1).toJson();
        assertThat(json).contains("\"title\":\"t\\\"\"", "\"detail\":\"d\\\\\"", "[\"x\\ty\"]");
    }
}
