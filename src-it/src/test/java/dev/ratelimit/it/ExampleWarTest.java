package dev.ratelimit.it;

import org.eclipse.jetty.server.Server;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The example WAR, deployed as a user would deploy it: its own web.xml, its own
 * microprofile-config.properties, SmallRye Config and the filter inside WEB-INF/lib.
 */
@ExtendWith(ValkeyExtension.class)
class ExampleWarTest {

    private final ValkeyServer valkey;

    ExampleWarTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @Test
    void theExampleEnforcesItsConfiguredRules() throws Exception {
        Path war = ExampleWar.war();
        assertThat(war).as("the example WAR (built by the examples/webapp module)").exists();
        valkey.flushAll();
        // MicroProfile Config gives system properties precedence over the WAR's own file.
        System.setProperty("ratelimit.valkey.url", valkey.url());
        ExampleWar.PATIENT_TIMEOUTS.forEach(System::setProperty);
        Server server = null;
        try {
            server = ExampleWar.start(war);
            String base = "http://127.0.0.1:" + ExampleWar.port(server);
            HttpResponse<String> hello = get(base + "/api/hello");
            assertThat(hello.statusCode()).isEqualTo(200);
            assertThat(hello.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=5;w=30");
            int allowed = 1;
            for (int i = 0; i < 9; i++) {
                if (get(base + "/api/hello").statusCode() == 200) {
                    allowed++;
                }
            }
            assertThat(allowed).as("a burst of 5").isEqualTo(5);

            int loginAllowed = 0;
            for (int i = 0; i < 7; i++) {
                HttpResponse<String> login = JettyApp.HTTP.send(HttpRequest.newBuilder(URI.create(base + "/login"))
                        .header("Content-Type", "application/x-www-form-urlencoded")
                        .POST(HttpRequest.BodyPublishers.ofString("username=alice")).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (login.statusCode() == 401) {
                    loginAllowed++;
                } else {
                    assertThat(login.statusCode()).isEqualTo(429);
                }
            }
            assertThat(loginAllowed).isEqualTo(5);
            try (var inspect = valkey.connect()) {
                assertThat(inspect.keys("rl:v1:*")).contains("rl:v1:login-user:sliding-log:{param.username:alice}");
            }
            // A model's tokens: admitted by the estimate (200), charged what the answer reported.
            HttpResponse<String> haiku = post(base + "/complete", "prompt=write a haiku about valkey");
            assertThat(haiku.statusCode()).isEqualTo(200);
            assertThat(haiku.headers().firstValue("X-Tokens-Used")).hasValue("120");
            assertThat(haiku.headers().firstValue("RateLimit-Policy")).hasValue("\"tokens\";q=1000;qu=\"tokens\";w=60");
            assertThat(haiku.headers().firstValue("RateLimit").orElseThrow()).startsWith("\"tokens\";r=800;");
            HttpResponse<String> next = post(base + "/complete", "prompt=and another");
            // 1,000 - 120 charged - 200 taken by its estimate, and what refilled since (1 a 60 ms).
            long left = Long.parseLong(next.headers().firstValue("RateLimit").orElseThrow().split(";r=")[1].split(";")[0]);
            assertThat(left).as("120 charged, not 200").isBetween(680L, 760L);
            // 300 words: 1,300 tokens, far past what was left: the key is in debt, refused.
            assertThat(post(base + "/complete", "prompt=" + "word ".repeat(300)).statusCode()).isEqualTo(200);
            HttpResponse<String> indebted = post(base + "/complete", "prompt=one more");
            assertThat(indebted.statusCode()).isEqualTo(429);
            assertThat(Long.parseLong(indebted.headers().firstValue("Retry-After").orElseThrow())).isGreaterThan(30);
            // The example's /metrics: ratelimit-micrometer in the WAR, no rate-limit code.
            String metrics = get(base + "/metrics").body();
            assertThat(metrics).contains("ratelimit_decisions_total{outcome=\"allowed\",rule=\"api\"} 5.0")
                    .contains("ratelimit_decisions_total{outcome=\"rejected\",rule=\"api\"} 5.0")
                    .contains("ratelimit_decisions_total{outcome=\"allowed\",rule=\"login-user\"} 5.0")
                    .contains("ratelimit_decisions_total{outcome=\"rejected\",rule=\"login-user\"} 2.0")
                    .contains("ratelimit_breaker_open 0.0");
        } finally {
            System.clearProperty("ratelimit.valkey.url");
            ExampleWar.PATIENT_TIMEOUTS.keySet().forEach(System::clearProperty);
            if (server != null) {
                server.stop();
            }
        }
    }

    private static HttpResponse<String> post(String uri, String form) throws Exception {
        return JettyApp.HTTP.send(HttpRequest.newBuilder(URI.create(uri)).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> get(String uri) throws Exception {
        return JettyApp.HTTP.send(HttpRequest.newBuilder(URI.create(uri)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
