package dev.ratelimit.it.jakarta;

import dev.ratelimit.it.ValkeyExtension;
import dev.ratelimit.it.ValkeyServer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @RateLimited} resource methods mixed with the other features against a real Valkey:
 * several annotations with a cost, the servlet filter reading the same form first, leases after
 * mapped exceptions, and a {@code closed} rule while Valkey does not answer.
 */
@ExtendWith(ValkeyExtension.class)
class AnnotationMixTest {

    private final ValkeyServer valkey;

    AnnotationMixTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    @Test
    void aRefusalByOneOfTwoAnnotationsTakesNothingOfTheOther() throws Exception {
        try (JakartaApp app = JakartaApp.start(JakartaApp.settings(valkey.url(), "ratelimit.rules", "a,b",
                "ratelimit.rule.a.scope", "method",
                "ratelimit.rule.a.limit", "3", "ratelimit.rule.a.window", "1h", "ratelimit.rule.a.key", "global",
                "ratelimit.rule.b.scope", "method",
                "ratelimit.rule.b.limit", "4", "ratelimit.rule.b.window", "1h", "ratelimit.rule.b.key", "param:id",
                "ratelimit.rule.b.cost", "2"), false, MixResources.Items.class)) {
            assertThat(app.get("/items/1").statusCode()).isEqualTo(200);
            assertThat(app.get("/items/1").statusCode()).isEqualTo(200);
            // b refuses item 1 (4 units used): a must not count it, so item 2 still fits a's 3.
            assertThat(app.get("/items/1").statusCode()).isEqualTo(429);
            assertThat(app.get("/items/2").statusCode()).isEqualTo(200);
            HttpResponse<String> overA = app.get("/items/3");
            assertThat(overA.statusCode()).isEqualTo(429);
            assertThat(overA.body()).contains("\"violated-policies\":[\"a\"]");
        }
    }

    @Test
    void aFormTheServletFilterReadFirstStillReachesTheMethodAndCountsOnce() throws Exception {
        try (JakartaApp app = JakartaApp.start(JakartaApp.settings(valkey.url(), "ratelimit.rules", "login",
                "ratelimit.rule.login.scope", "method",
                "ratelimit.rule.login.limit", "2", "ratelimit.rule.login.window", "1h",
                "ratelimit.rule.login.key", "param:username"), true, EdgeResources.LimitedForm.class)) {
            for (int remaining = 1; remaining >= 0; remaining--) {
                HttpResponse<String> allowed = app.postForm("/form", "username=alice&password=secret");
                assertThat(allowed.body()).isEqualTo("user alice secret");
                String expected = "\"login\";r=" + remaining + ";";
                assertThat(allowed.headers().firstValue("RateLimit")).hasValueSatisfying(
                        value -> assertThat(value).startsWith(expected));
            }
            assertThat(app.postForm("/form", "username=alice&password=secret").statusCode()).isEqualTo(429);
        }
    }

    @Test
    void aLeaseIsReleasedAfterAMappedException() throws Exception {
        try (JakartaApp app = JakartaApp.start(JakartaApp.settings(valkey.url(), "ratelimit.rules", "exports",
                "ratelimit.rule.exports.algorithm", "concurrency", "ratelimit.rule.exports.scope", "method",
                "ratelimit.rule.exports.limit", "1"), false,
                MixResources.Reports.class, MixResources.RefusedMapper.class)) {
            for (String kind : List.of("404", "ok", "422", "ok", "404", "422", "ok")) {
                int expected = "ok".equals(kind) ? 200 : Integer.parseInt(kind);
                assertThat(app.get("/reports?throw=" + kind).statusCode()).as(kind).isEqualTo(expected);
            }
        }
    }

    @Test
    void aClosedRuleWhileValkeyIsPausedIsTheFilters503() throws Exception {
        Map<String, String> settings = JakartaApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.scope", "method",
                "ratelimit.rule.api.limit", "5", "ratelimit.rule.api.window", "1h", "ratelimit.rule.api.key", "global",
                "ratelimit.rule.api.on-failure", "closed", "ratelimit.valkey.timeout", "300ms");
        HttpResponse<String> byFilter;
        try (JakartaApp app = JakartaApp.start(JakartaApp.routeRules(settings), true, EdgeResources.Plain.class)) {
            assertThat(app.get("/p").statusCode()).isEqualTo(200);
            valkey.pause(Duration.ofSeconds(2));
            byFilter = app.get("/p");
        }
        valkey.flushAll();
        HttpResponse<String> byAnnotation;
        try (JakartaApp app = JakartaApp.start(settings, false, EdgeResources.Annotated.class)) {
            assertThat(app.get("/p").statusCode()).isEqualTo(200);
            valkey.pause(Duration.ofSeconds(2));
            byAnnotation = app.get("/p");
        }
        assertThat(byFilter.statusCode()).isEqualTo(503);
        assertThat(byAnnotation.statusCode()).isEqualTo(503);
        assertThat(normalized(byAnnotation)).isEqualTo(normalized(byFilter));
        assertThat(byAnnotation.body().replaceAll("[0-9]+", "#")).isEqualTo(byFilter.body().replaceAll("[0-9]+", "#"));
    }

    private static Map<String, List<String>> normalized(HttpResponse<String> response) {
        Map<String, List<String>> headers = new TreeMap<>();
        response.headers().map().forEach((name, values) -> {
            if (!name.equalsIgnoreCase("date")) {
                headers.put(name.toLowerCase(), values.stream().map(v -> v.replaceAll("[0-9]+", "#")).toList());
            }
        });
        return headers;
    }
}
