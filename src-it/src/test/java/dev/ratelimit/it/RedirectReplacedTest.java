package dev.ratelimit.it;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.net.http.HttpResponse;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A 3xx the application replaces by another status before the response is committed gets the
 * rate-limit fields back (README: the filter "puts them back if the status changes again before
 * the response is committed"), however it replaces it: {@code sendError} with an error page (an
 * ERROR dispatch) or without one, or {@code reset()} before a 200; in the request's thread and
 * from {@code startAsync(request, response)}.
 */
@ExtendWith(ValkeyExtension.class)
class RedirectReplacedTest {

    private final ValkeyServer valkey;

    RedirectReplacedTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"/redirect?how=error-404, 404", "/redirect?how=error-503, 503", "/redirect?how=reset, 200",
            "/redirect?how=error-404&async=1, 404", "/redirect?how=error-503&async=1, 503",
            "/redirect?how=reset&async=1, 200"})
    void aRedirectionReplacedByAnotherStatusGetsTheFieldsBack(String path, int status) throws Exception {
        // Promise 5: a 3xx replaced by another status gets the rate-limit fields back.
        Map<String, String> settings = JettyApp.settings(valkey.url(), "ratelimit.rules", "all",
                "ratelimit.rule.all.algorithm", "sliding-log", "ratelimit.rule.all.limit", "100",
                "ratelimit.rule.all.window", "1h", "ratelimit.headers", "both");
        try (JettyApp app = JettyApp.start(settings)) {
            HttpResponse<String> response = app.get(path);
            assertThat(response.statusCode()).as(path).isEqualTo(status);
            assertThat(ClientFields.rateLimitFieldNames(response)).as("fields of the %s that replaced a 302 (%s)",
                    status, path).isNotEmpty();
            assertThat(ClientFields.draft11(response).get(0).r()).as(path).isEqualTo(99);
            assertThat(ClientFields.item(response, "X-RateLimit-Remaining")).as(path).isEqualTo(99);
        }
    }
}
