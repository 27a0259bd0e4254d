package dev.ratelimit.it.jakarta;

import dev.ratelimit.it.ValkeyExtension;
import dev.ratelimit.it.ValkeyServer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@code @RateLimited} resource method runs after authentication so that a rule keyed by
 * {@code principal} (or with a role plan) sees the user: also the user a Jakarta REST filter
 * authenticated ({@code SecurityContext}), as token-based applications do, against a real Valkey.
 */
@ExtendWith(ValkeyExtension.class)
class AnnotationPrincipalTest {

    private final ValkeyServer valkey;

    AnnotationPrincipalTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    private static HttpResponse<String> me(JakartaApp app, String user) throws Exception {
        return JakartaApp.HTTP.send(HttpRequest.newBuilder(app.uri("/me")).timeout(Duration.ofSeconds(10))
                .header("X-User", user).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aRuleKeyedByPrincipalCountsTheUserJakartaRestAuthenticated() throws Exception {
        try (JakartaApp app = JakartaApp.start(JakartaApp.settings(valkey.url(), "ratelimit.rules", "user",
                "ratelimit.rule.user.scope", "method",
                "ratelimit.rule.user.limit", "2", "ratelimit.rule.user.window", "1h",
                "ratelimit.rule.user.key", "principal"), false, AuthResources.TokenFilter.class,
                AuthResources.Me.class)) {
            HttpResponse<String> first = me(app, "alice");
            assertThat(first.body()).isEqualTo("me alice");
            assertThat(first.headers().firstValue("RateLimit")).as("the rule counted alice").isPresent();
            assertThat(me(app, "alice").statusCode()).isEqualTo(200);
            assertThat(me(app, "alice").statusCode()).isEqualTo(429);
            assertThat(me(app, "bob").statusCode()).isEqualTo(200);
        }
    }
}
