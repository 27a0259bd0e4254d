package dev.ratelimit.it;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Settings overridden the way deployments override them: the example WAR in a child process
 * whose real process environment holds the variables, as MicroProfile Config maps them
 * (hyphens included), with fewer rules than its file defines.
 */
@ExtendWith(ValkeyExtension.class)
class EnvironmentTest {

    private final ValkeyServer valkey;

    EnvironmentTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @Test
    void theProcessEnvironmentOverridesEverySettingAndMayRunFewerRules() throws Exception {
        valkey.flushAll();
        Path war = ExampleWar.war();
        assertThat(war).as("the example WAR (built by the examples/webapp module)").exists();
        ProcessBuilder builder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), ExampleWar.class.getName(), war.toString());
        builder.redirectErrorStream(true);
        builder.environment().putAll(Map.of(
                "RATELIMIT_VALKEY_URL", valkey.url(),
                "RATELIMIT_KEY_PREFIX", "rl:probe",
                "RATELIMIT_RULES", "api,login-user",
                "RATELIMIT_RULE_API_LIMIT", "3",
                "RATELIMIT_RULE_API_BURST", "3",
                "RATELIMIT_TRUSTED_PROXIES", "127.0.0.1/32",
                "RATELIMIT_RULE_LOGIN_USER_ON_FAILURE", "closed",
                "RATELIMIT_RULE_LOGIN_USER_LIMIT", "2"));
        builder.environment().putAll(ExampleWar.environment(ExampleWar.PATIENT_TIMEOUTS));
        Process process = builder.start();
        List<String> output = new ArrayList<>();
        try {
            int port = ExampleWar.awaitPort(process, output);
            String base = "http://127.0.0.1:" + port;
            List<Integer> statuses = new ArrayList<>();
            HttpResponse<String> first = null;
            for (int i = 0; i < 4; i++) {
                HttpResponse<String> response = get(base + "/api/hello", "X-Forwarded-For", "203.0.113.7");
                first = first == null ? response : first;
                statuses.add(response.statusCode());
            }
            assertThat(statuses).as("RATELIMIT_RULE_API_LIMIT=3, output:\n%s", output).containsExactly(200, 200, 200, 429);
            assertThat(first.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=3;w=60");
            try (var inspect = valkey.connect()) {
                assertThat(inspect.keys("*")).as("RATELIMIT_KEY_PREFIX and RATELIMIT_TRUSTED_PROXIES")
                        .contains("rl:probe:api:token-bucket:{ip:203.0.113.7}");
            }
            List<Integer> logins = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                logins.add(JettyApp.HTTP.send(HttpRequest.newBuilder(URI.create(base + "/login"))
                        .header("Content-Type", "application/x-www-form-urlencoded")
                        .POST(HttpRequest.BodyPublishers.ofString("username=alice")).build(),
                        HttpResponse.BodyHandlers.ofString()).statusCode());
            }
            assertThat(logins).as("RATELIMIT_RULE_LOGIN_USER_LIMIT=2 (a rule name with a hyphen)")
                    .containsExactly(401, 401, 429);
            HttpResponse<String> search = get(base + "/search?q=x");
            assertThat(search.statusCode()).isEqualTo(200);
            assertThat(search.headers().firstValue("RateLimit")).as("search is configured but not listed").isEmpty();
        } finally {
            process.getOutputStream().close();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }

    private static HttpResponse<String> get(String uri, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(uri)).timeout(Duration.ofSeconds(10));
        if (headers.length > 0) {
            request.headers(headers);
        }
        return JettyApp.HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
