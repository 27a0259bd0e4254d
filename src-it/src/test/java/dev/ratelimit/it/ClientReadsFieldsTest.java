package dev.ratelimit.it;

import org.json.JSONObject;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every field the filter sends, read on Jetty with a real Valkey as a client reads it (an
 * independent Structured Fields parser, see {@link ClientFields}), for every algorithm, on a
 * 200 and a 429, in each header version; and the 503 of a closed rule, which carries none.
 */
@ExtendWith(ValkeyExtension.class)
class ClientReadsFieldsTest {

    private static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";
    private static final String REDUCED_CAPACITY =
            "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity";

    private final ValkeyServer valkey;

    ClientReadsFieldsTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    /** Rule {@code api} of the algorithm, limit 1, beside a wide fixed-window rule. */
    private static Map<String, String> twoRules(String url, String algorithm, String... more) {
        List<String> pairs = new ArrayList<>(List.of("ratelimit.rules", "api,wide",
                "ratelimit.rule.api.algorithm", algorithm, "ratelimit.rule.api.limit", "1",
                "ratelimit.rule.wide.algorithm", "fixed-window", "ratelimit.rule.wide.limit", "1000",
                "ratelimit.rule.wide.window", "1h"));
        if (!algorithm.equals("concurrency")) {
            pairs.addAll(List.of("ratelimit.rule.api.window", "1h"));
        }
        pairs.addAll(List.of(more));
        return JettyApp.settings(url, pairs.toArray(String[]::new));
    }

    @ParameterizedTest
    @CsvSource({
            "fixed-window,both", "sliding-log,both", "sliding-window-counter,both", "token-bucket,both", "gcra,both",
            "concurrency,both",
            "fixed-window,draft-03", "sliding-log,draft-03", "sliding-window-counter,draft-03",
            "token-bucket,draft-03", "gcra,draft-03", "concurrency,draft-03"})
    void everyFieldParsesOnA200AndA429(String algorithm, String mode) throws Exception {
        try (JettyApp app = JettyApp.start(twoRules(valkey.url(), algorithm, "ratelimit.headers", mode))) {
            List<HttpResponse<String>> allowedAndRejected = allowedThenRejected(app, algorithm);
            HttpResponse<String> allowed = allowedAndRejected.get(0);
            HttpResponse<String> rejected = allowedAndRejected.get(1);
            assertThat(allowed.statusCode()).isEqualTo(200);
            assertThat(rejected.statusCode()).isEqualTo(429);
            for (HttpResponse<String> response : allowedAndRejected) {
                if (mode.equals("both")) {
                    readDraft11AndLegacy(response, algorithm);
                } else {
                    readDraft03(response, algorithm);
                }
            }
            JSONObject problem = ClientFields.problem(rejected);
            assertThat(problem.getString("type")).isEqualTo(QUOTA_EXCEEDED);
            assertThat(ClientFields.violatedPolicies(problem)).containsExactly("api");
            assertThat(ClientFields.item(rejected, "Retry-After")).isPositive();
        }
    }

    /** Two requests of one client: the second finds {@code api} exhausted. */
    private static List<HttpResponse<String>> allowedThenRejected(JettyApp app, String algorithm) throws Exception {
        if (!algorithm.equals("concurrency")) {
            HttpResponse<String> allowed = app.get("/");
            return List.of(allowed, app.get("/"));
        }
        // The only slot is held by a request the test releases: no timing involved.
        DispatchServlets.Hold.reset();
        CompletableFuture<HttpResponse<String>> held = JettyApp.HTTP.sendAsync(HttpRequest.newBuilder(app.uri("/hold"))
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(DispatchServlets.Hold.entered.await(20, TimeUnit.SECONDS)).as("the held request arrived").isTrue();
        HttpResponse<String> rejected = app.get("/");
        DispatchServlets.Hold.release.countDown();
        return List.of(held.get(30, TimeUnit.SECONDS), rejected);
    }

    private static void readDraft11AndLegacy(HttpResponse<String> response, String algorithm) {
        List<ClientFields.Announced> rules = ClientFields.draft11(response);
        assertThat(rules).extracting(ClientFields.Announced::name).containsExactly("api", "wide");
        ClientFields.Announced api = rules.get(0);
        assertThat(api.q()).isEqualTo(1);
        if (algorithm.equals("concurrency")) {
            assertThat(api.qu()).isEqualTo("concurrent-requests");
            assertThat(api.w()).as("no window").isNull();
        } else {
            assertThat(api.qu()).as("the default unit, requests").isNull();
            assertThat(api.w()).isEqualTo(3600);
        }
        assertThat(api.r()).as("api is spent by the first request").isZero();
        assertThat(rules.get(1).w()).isEqualTo(3600);
        assertThat(rules.get(1).q()).isEqualTo(1000);
        // Legacy: the rule closest to its limit, api.
        assertThat(ClientFields.item(response, "X-RateLimit-Limit")).isEqualTo(1);
        assertThat(ClientFields.item(response, "X-RateLimit-Remaining")).isZero();
        assertThat(ClientFields.item(response, "X-RateLimit-Reset")).isEqualTo(api.t());
        assertThat(response.headers().firstValue("RateLimit-Limit")).as("not the -03 fields").isEmpty();
    }

    private static void readDraft03(HttpResponse<String> response, String algorithm) {
        ClientFields.Draft03 fields = ClientFields.draft03(response);
        assertThat(fields.expiringLimit()).as("api's quota: the rule closest to its limit").isEqualTo(1);
        assertThat(fields.remaining()).isZero();
        List<long[]> expected = algorithm.equals("concurrency")
                ? List.of(new long[] {1000, 3600}) : List.of(new long[] {1, 3600}, new long[] {1000, 3600});
        assertThat(fields.policies()).as("a quota policy per windowed rule").containsExactlyElementsOf(expected);
        assertThat(response.headers().firstValue("RateLimit")).as("not the draft-11 fields").isEmpty();
        assertThat(response.headers().firstValue("RateLimit-Policy")).isEmpty();
        assertThat(response.headers().firstValue("X-RateLimit-Limit")).isEmpty();
    }

    /**
     * A closed rule that cannot reach Valkey: 503, the draft's temporary-reduced-capacity type
     * naming the rule, and no rate-limit field of any version (nothing was decided).
     */
    @ParameterizedTest
    @ValueSource(strings = {"fixed-window", "sliding-log", "sliding-window-counter", "token-bucket", "gcra",
            "concurrency"})
    void aClosedRuleThatCannotBeCheckedAnswers503WithItsProblemType(String algorithm) throws Exception {
        Map<String, String> m = twoRules("redis://127.0.0.1:" + ValkeyServer.freePort(), algorithm,
                "ratelimit.headers", "both", "ratelimit.valkey.timeout", "100ms",
                "ratelimit.valkey.connect-timeout", "100ms", "ratelimit.rule.api.on-failure", "closed");
        try (JettyApp app = JettyApp.start(m)) {
            HttpResponse<String> refused = app.get("/");
            assertThat(refused.statusCode()).isEqualTo(503);
            JSONObject problem = ClientFields.problem(refused);
            assertThat(problem.getString("type")).isEqualTo(REDUCED_CAPACITY);
            assertThat(ClientFields.violatedPolicies(problem)).as("wide's policy is open").containsExactly("api");
            assertThat(ClientFields.item(refused, "Retry-After")).isEqualTo(1);
            assertThat(ClientFields.rateLimitFieldNames(refused)).isEmpty();
        }
    }
}
