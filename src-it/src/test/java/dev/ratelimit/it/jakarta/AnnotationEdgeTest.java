package dev.ratelimit.it.jakarta;

import dev.ratelimit.it.ValkeyExtension;
import dev.ratelimit.it.ValkeyServer;
import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static dev.ratelimit.it.jakarta.Welds.weld;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Edge cases of {@code @RateLimited} against a real Valkey: several calls of one CDI method under
 * one HTTP request, the refusal compared with the filter's own, form bodies Jakarta REST itself
 * answers, and {@code concurrency} leases of asynchronous resource methods.
 */
@ExtendWith(ValkeyExtension.class)
class AnnotationEdgeTest {

    private final ValkeyServer valkey;

    AnnotationEdgeTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    private Map<String, String> settings() {
        return JakartaApp.settings(valkey.url(), "ratelimit.rules", "reset,api,login,exports,daily,welcome",
                "ratelimit.rule.welcome.scope", "method",
                "ratelimit.rule.welcome.limit", "1", "ratelimit.rule.welcome.window", "1h",
                "ratelimit.rule.welcome.key", "param:0",
                "ratelimit.rule.daily.scope", "method",
                "ratelimit.rule.daily.limit", "4", "ratelimit.rule.daily.window", "1d",
                "ratelimit.rule.daily.key", "global",
                "ratelimit.rule.reset.scope", "method",
                "ratelimit.rule.reset.limit", "3", "ratelimit.rule.reset.window", "1h",
                "ratelimit.rule.reset.key", "param:accountId",
                "ratelimit.rule.api.scope", "method",
                "ratelimit.rule.api.limit", "1", "ratelimit.rule.api.window", "1h", "ratelimit.rule.api.key", "global",
                "ratelimit.rule.login.scope", "method",
                "ratelimit.rule.login.limit", "100", "ratelimit.rule.login.window", "1h",
                "ratelimit.rule.login.key", "param:username",
                "ratelimit.rule.exports.algorithm", "concurrency", "ratelimit.rule.exports.scope", "method",
                "ratelimit.rule.exports.limit", "1");
    }

    @Test
    void everyCallOfACdiMethodUnderOneRequestCounts() throws Exception {
        try (JakartaApp plain = JakartaApp.start(settings(), false);
             WeldContainer weld = weld(plain, MailService.class, CurrentRequest.class);
             JakartaApp app = JakartaApp.start(settings(), false,
                     new BatchResetResource(weld.select(MailService.class).get()))) {
            MailService mails = weld.select(MailService.class).get();
            // Four reset mails to one account in one request: the rule allows three.
            HttpResponse<String> batch = app.postForm("/resets?id=5&id=5&id=5&id=5", "");
            assertThat(mails.sent()).containsExactly("reset:5", "reset:5", "reset:5");
            assertThat(batch.statusCode()).isEqualTo(429);
        }
    }

    @Test
    void theAnnotationsRefusalIsTheFiltersOwnByteForByte() throws Exception {
        Map<String, String> settings = JakartaApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.scope", "method",
                "ratelimit.rule.api.limit", "1", "ratelimit.rule.api.window", "1h", "ratelimit.rule.api.key", "global");
        HttpResponse<String> byFilter;
        try (JakartaApp app = JakartaApp.start(JakartaApp.routeRules(settings), true, EdgeResources.Plain.class)) {
            assertThat(app.get("/p").statusCode()).isEqualTo(200);
            byFilter = app.get("/p");
        }
        valkey.flushAll();
        HttpResponse<String> byAnnotation;
        try (JakartaApp app = JakartaApp.start(settings, false, EdgeResources.Annotated.class)) {
            assertThat(app.get("/p").statusCode()).isEqualTo(200);
            byAnnotation = app.get("/p");
        }
        assertThat(byAnnotation.statusCode()).isEqualTo(byFilter.statusCode()).isEqualTo(429);
        assertThat(normalized(byAnnotation)).isEqualTo(normalized(byFilter));
        assertThat(byAnnotation.body().replaceAll("[0-9]+", "#")).isEqualTo(byFilter.body().replaceAll("[0-9]+", "#"));
    }

    /** The response's header fields but Date, numbers blanked (seconds left may differ by one). */
    private static Map<String, List<String>> normalized(HttpResponse<String> response) {
        Map<String, List<String>> headers = new TreeMap<>();
        response.headers().map().forEach((name, values) -> {
            if (!name.equalsIgnoreCase("date")) {
                headers.put(name.toLowerCase(), values.stream().map(v -> v.replaceAll("[0-9]+", "#")).toList());
            }
        });
        return headers;
    }

    @Test
    void aFormBodyIsAnsweredAsJakartaRestAnswersItUnlimited() throws Exception {
        List<String[]> bodies = List.of(
                new String[] {"application/x-www-form-urlencoded", "username=%zz&password=x"},
                new String[] {"application/x-www-form-urlencoded", "username=a%2&password=x"},
                new String[] {"application/x-www-form-urlencoded; charset=bogus", "username=a&password=x"},
                new String[] {"application/x-www-form-urlencoded", "username=a+b%26c&password=%C3%A9&x"},
                new String[] {"application/x-www-form-urlencoded", "username=" + "x".repeat(300_000) + "&password=y"});
        for (String[] body : bodies) {
            int plainStatus;
            String plainBody;
            try (JakartaApp app = JakartaApp.start(settings(), false, EdgeResources.PlainForm.class)) {
                HttpResponse<String> response = post(app, body[0], body[1]);
                plainStatus = response.statusCode();
                plainBody = response.body();
            }
            try (JakartaApp app = JakartaApp.start(settings(), false, EdgeResources.LimitedForm.class)) {
                HttpResponse<String> response = post(app, body[0], body[1]);
                String what = body[0] + " " + body[1].substring(0, Math.min(40, body[1].length()));
                if (plainStatus == 200) {
                    assertThat(response.statusCode()).as(what).isEqualTo(200);
                    assertThat(response.body()).as(what).isEqualTo(plainBody);
                } else {
                    // The client's error stays one: Jakarta REST's own status, or 400 where Jersey says 500 (a bad charset).
                    assertThat(response.statusCode()).as(what).isIn(plainStatus, 400);
                }
            }
        }
    }

    private static HttpResponse<String> post(JakartaApp app, String type, String body) throws Exception {
        return JakartaApp.HTTP.send(HttpRequest.newBuilder(app.uri("/form")).timeout(Duration.ofSeconds(10))
                .header("Content-Type", type).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aConcurrencyLeaseOfAnAsynchronousMethodIsReleasedWhenItResumes() throws Exception {
        try (JakartaApp app = JakartaApp.start(settings(), false, EdgeResources.Async.class)) {
            for (String path : List.of("/async/suspended", "/async/stage")) {
                for (int i = 0; i < 4; i++) {
                    boolean fail = i % 2 == 1;
                    assertThat(app.get(path + (fail ? "?fail=1" : "")).statusCode()).as(path + " #" + i)
                            .isEqualTo(fail ? 409 : 200);
                }
            }
        }
    }
}
