package dev.ratelimit.servlet;

import org.junit.jupiter.api.Test;

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

    @Test
    void everyStringIsEscaped() {
        assertThat(ProblemDetails.string("a\"b\\c\nd\u0001é")).isEqualTo("\"a\\\"b\\\\c\\nd\\u0001é\"");
        String json = new ProblemDetails("about:blank", "t\"", 503, "d\\", List.of("x\ty"), "r", 1).toJson();
        assertThat(json).contains("\"title\":\"t\\\"\"", "\"detail\":\"d\\\\\"", "[\"x\\ty\"]");
    }
}
