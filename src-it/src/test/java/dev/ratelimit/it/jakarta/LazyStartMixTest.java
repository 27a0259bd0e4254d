package dev.ratelimit.it.jakarta;

import dev.ratelimit.it.ValkeyExtension;
import dev.ratelimit.it.ValkeyServer;
import dev.ratelimit.jakarta.RateLimitExceededException;
import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static dev.ratelimit.it.jakarta.Welds.weld;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The first annotated call, which starts the limits, with the rules' other features, on Jersey,
 * Jetty 12, Weld SE and a real Valkey: its response carries the filter's fields byte for byte, and
 * a {@code cost} above one is taken by the REST and the CDI method alike from one count.
 */
@ExtendWith(ValkeyExtension.class)
class LazyStartMixTest {

    private final ValkeyServer valkey;

    LazyStartMixTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    private Map<String, String> settings(String... more) {
        Map<String, String> settings = JakartaApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.scope", "method",
                "ratelimit.rule.api.limit", "5", "ratelimit.rule.api.window", "1h", "ratelimit.rule.api.key", "global");
        for (int i = 0; i < more.length; i += 2) {
            settings.put(more[i], more[i + 1]);
        }
        return settings;
    }

    @Test
    void theFirstCallsFieldsAreTheFiltersFirstResponsesByteForByte() throws Exception {
        HttpResponse<String> byFilter;
        try (JakartaApp app = JakartaApp.start(JakartaApp.routeRules(settings()), true, EdgeResources.Plain.class)) {
            byFilter = app.get("/p");
        }
        valkey.flushAll();
        HttpResponse<String> byAnnotation;
        try (JakartaApp app = JakartaApp.start(settings(), false, EdgeResources.Annotated.class)) {
            byAnnotation = app.get("/p");
        }
        assertThat(byAnnotation.statusCode()).isEqualTo(200);
        assertThat(fields(byAnnotation)).isNotEmpty().isEqualTo(fields(byFilter));
    }

    @Test
    void aCostAboveOneIsTakenByBothWaysInFromOneCount() throws Exception {
        try (JakartaApp app = JakartaApp.start(settings("ratelimit.rule.api.cost", "2"), false,
                EdgeResources.Annotated.class); WeldContainer weld = weld(app, ApiService.class)) {
            ApiService api = weld.select(ApiService.class).get();
            assertThat(api.call()).isEqualTo("ok");
            assertThat(app.get("/p").statusCode()).isEqualTo(200);
            // 4 of 5 taken: one unit left, less than a call's cost.
            assertThat(app.get("/p").statusCode()).isEqualTo(429);
            assertThatThrownBy(api::call).isInstanceOf(RateLimitExceededException.class);
        }
    }

    /**
     * The rate-limit fields of a response, their numbers as {@code #}: a reset counted in seconds
     * may tick between the two applications' calls.
     */
    private static Map<String, List<String>> fields(HttpResponse<String> response) {
        Map<String, List<String>> fields = new TreeMap<>();
        response.headers().map().forEach((name, values) -> {
            String lower = name.toLowerCase();
            if (lower.startsWith("ratelimit") || lower.startsWith("x-ratelimit") || lower.equals("retry-after")) {
                fields.put(lower, values.stream().map(v -> v.replaceAll("[0-9]+", "#")).toList());
            }
        });
        return fields;
    }
}
