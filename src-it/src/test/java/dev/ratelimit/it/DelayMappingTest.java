package dev.ratelimit.it;

import dev.ratelimit.RateLimitListener;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A held request whose application suspends it again (startAsync) at its slot, or throws there:
 * a concurrency rule beside the delaying rule must have its permit released exactly once.
 */
@ExtendWith(ValkeyExtension.class)
class DelayMappingTest {

    static final AtomicInteger RAN = new AtomicInteger();
    private final ValkeyServer valkey;

    DelayMappingTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.start();
        valkey.flushAll();
        RAN.set(0);
    }

    private Map<String, String> settings() {
        return JettyApp.settings(valkey.url(), "ratelimit.rules", "shaped,inflight",
                "ratelimit.rule.shaped.key", "global",
                "ratelimit.rule.shaped.algorithm", "token-bucket",
                "ratelimit.rule.shaped.limit", "1",
                "ratelimit.rule.shaped.window", "500ms",
                "ratelimit.rule.shaped.max-delay", "3s",
                "ratelimit.rule.inflight.key", "global",
                "ratelimit.rule.inflight.algorithm", "concurrency",
                "ratelimit.rule.inflight.limit", "1",
                "ratelimit.rule.inflight.permit-timeout", "60s",
                "ratelimit.deny-cache.enabled", "false");
    }

    /** mode: async (app startAsync at its slot, completes 50 ms later), throw, plain. */
    @ParameterizedTest(name = "{0} asyncMapped={1} mode={2}")
    @CsvSource({
            "JETTY, false, async", "JETTY, true, async", "TOMCAT, false, async", "TOMCAT, true, async",
            "JETTY, false, throw", "JETTY, true, throw", "TOMCAT, false, throw", "TOMCAT, true, throw",
            "JETTY, false, plain", "TOMCAT, false, plain"})
    void aHeldRequestsPermitIsReleasedWhateverTheAppDoesAtItsSlot(String container, boolean asyncMapped, String mode)
            throws Exception {
        DelayHttpTest.Events events = new DelayHttpTest.Events();
        try (DelayHttpTest.App app = DelayHttpTest.App.start(DelayHttpTest.Container.valueOf(container), settings(),
                events, asyncMapped ? EnumSet.allOf(DispatcherType.class) : EnumSet.of(DispatcherType.REQUEST),
                Map.of("/app", new AppServlet()))) {
            int port = app.port();
            HttpResponse<String> first = get(port, "/app?mode=plain");
            assertThat(first.statusCode()).isEqualTo(200);
            long t0 = System.nanoTime();
            HttpResponse<String> held = get(port, "/app?mode=" + mode);
            long heldMs = (System.nanoTime() - t0) / 1_000_000;
            assertThat(events.count("shaped", RateLimitListener.Event.DELAYED)).as("the second was held").isEqualTo(1);
            System.out.println("delay: " + container + " asyncMapped=" + asyncMapped + " mode=" + mode
                    + " held status=" + held.statusCode() + " after " + heldMs + " ms, RateLimit="
                    + held.headers().firstValue("RateLimit").orElse("-"));
            Thread.sleep(800); // the bucket refills
            HttpResponse<String> third = get(port, "/app?mode=plain");
            System.out.println("delay: " + container + " asyncMapped=" + asyncMapped + " mode=" + mode
                    + " third status=" + third.statusCode() + " " + third.headers().map() + " body=" + third.body());
            assertThat(third.statusCode()).as("the held request's concurrency permit was released (%s, %s, %s)",
                    container, asyncMapped, mode).isEqualTo(200);
        }
    }

    private static HttpResponse<String> get(int port, String path) throws Exception {
        return JettyApp.HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
    }

    static final class AppServlet extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
            RAN.incrementAndGet();
            String mode = request.getParameter("mode");
            if ("throw".equals(mode)) {
                throw new IllegalStateException("the application fails at its slot");
            }
            if ("async".equals(mode)) {
                AsyncContext async = request.startAsync();
                new Thread(() -> {
                    try {
                        Thread.sleep(50);
                        async.getResponse().setContentType("text/plain");
                        async.getResponse().getWriter().write("ran async");
                    } catch (Exception e) {
                        // ignore
                    }
                    async.complete();
                }).start();
                return;
            }
            if (request.getParameter("cost") != null) {
                response.setHeader("X-Cost", request.getParameter("cost"));
            }
            if (request.getParameter("status") != null) {
                response.setStatus(Integer.parseInt(request.getParameter("status")));
            }
            if (request.getParameter("sleep") != null) {
                try {
                    Thread.sleep(Long.parseLong(request.getParameter("sleep")));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            response.setContentType("text/plain");
            response.getWriter().write("ran");
        }
    }
}
