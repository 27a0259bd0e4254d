package dev.ratelimit.it;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The filter mapped as web.xml files often map it, for every dispatcher type and async
 * supported: a forward, an async servlet, an async dispatch, {@code sendError} and an
 * exception (both shown an error page behind the filter) each count their client request once,
 * and every response keeps its headers.
 */
@ExtendWith(ValkeyExtension.class)
class DispatchTest {

    private final ValkeyServer valkey;

    DispatchTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    private Map<String, String> oneRule(String limit) {
        return JettyApp.settings(valkey.url(), "ratelimit.rules", "all", "ratelimit.rule.all.algorithm", "sliding-log",
                "ratelimit.rule.all.limit", limit, "ratelimit.rule.all.window", "1h");
    }

    @Test
    void eachClientRequestIsCountedOnceWhateverItsDispatches() throws Exception {
        try (JettyApp app = JettyApp.start(oneRule("100"))) {
            List<String> paths = List.of("/forward", "/async", "/async-dispatch", "/send-error", "/throw", "/");
            List<Integer> statuses = List.of(200, 200, 200, 404, 500, 200);
            for (int i = 0; i < paths.size(); i++) {
                HttpResponse<String> response = app.get(paths.get(i));
                assertThat(response.statusCode()).as(paths.get(i)).isEqualTo(statuses.get(i));
                assertThat(response.headers().firstValue("RateLimit")).as("RateLimit of %s", paths.get(i))
                        .hasValue("\"all\";r=" + (99 - i) + ";t=3600");
            }
        }
    }

    @Test
    void anAsyncServletBehindTheFilterIsLimitedAndCompletes() throws Exception {
        try (JettyApp app = JettyApp.start(oneRule("2"))) {
            for (int i = 0; i < 2; i++) {
                HttpResponse<String> response = app.get("/async");
                assertThat(response.statusCode()).isEqualTo(200);
                assertThat(response.body()).isEqualTo("async done");
                assertThat(response.headers().firstValue("RateLimit")).hasValue("\"all\";r=" + (1 - i) + ";t=3600");
            }
            HttpResponse<String> third = app.get("/async");
            assertThat(third.statusCode()).isEqualTo(429);
            assertThat(third.headers().firstValue("Retry-After")).isPresent();
        }
    }
}
