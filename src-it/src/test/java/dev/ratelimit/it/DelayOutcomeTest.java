package dev.ratelimit.it;

import dev.ratelimit.RateLimitListener;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/** refund-when / cost-from on held requests; a concurrency rule beside a delaying rule at an undeploy. */
@ExtendWith(ValkeyExtension.class)
class DelayOutcomeTest {

    private final ValkeyServer valkey;

    DelayOutcomeTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.start();
        valkey.flushAll();
    }

    private Map<String, String> settings(String... more) {
        List<String> pairs = new ArrayList<>(List.of("ratelimit.rules", "shaped",
                "ratelimit.rule.shaped.key", "global",
                "ratelimit.rule.shaped.algorithm", "token-bucket",
                "ratelimit.rule.shaped.limit", "1",
                "ratelimit.rule.shaped.window", "500ms",
                "ratelimit.rule.shaped.max-delay", "3s",
                "ratelimit.deny-cache.enabled", "false"));
        pairs.addAll(List.of(more));
        return JettyApp.settings(valkey.url(), pairs.toArray(String[]::new));
    }

    static CompletableFuture<HttpResponse<String>> send(int port, String path) {
        return JettyApp.HTTP.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * mode refund: refund-when=5xx, every request answers 500; cost: cost=2 cost-from header, each
     * reports 0. Only the last held gives back (its units exactly): right after the burst, one
     * request passes now and the next waits a slot.
     */
    @ParameterizedTest
    @ValueSource(strings = {"refund", "cost", "control"})
    void onlyTheLastHeldGivesBack(String mode) throws Exception {
        Map<String, String> settings = switch (mode) {
            case "refund" -> settings("ratelimit.rule.shaped.refund-when", "status:5xx");
            case "cost" -> settings("ratelimit.rule.shaped.cost", "1", "ratelimit.rule.shaped.cost-from", "header:X-Cost");
            default -> settings();
        };
        String query = switch (mode) {
            case "refund" -> "?mode=plain&status=500";
            case "cost" -> "?mode=plain&cost=0";
            default -> "?mode=plain";
        };
        DelayHttpTest.Events events = new DelayHttpTest.Events();
        try (DelayHttpTest.App app = jetty(settings, events, true)) {
            int port = app.port();
            List<CompletableFuture<HttpResponse<String>>> burst = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                burst.add(send(port, "/app" + query));
            }
            List<String> statuses = new ArrayList<>();
            for (CompletableFuture<HttpResponse<String>> r : burst) {
                statuses.add(r.get().statusCode() + " " + r.get().headers().firstValue("RateLimit").orElse("-"));
            }
            System.out.println("delay: " + mode + " burst " + statuses + " delayed="
                    + events.count("shaped", RateLimitListener.Event.DELAYED));
            dump("after burst");
            long t0 = System.nanoTime();
            java.util.Map<Object, Long> done = new java.util.concurrent.ConcurrentHashMap<>();
            CompletableFuture<HttpResponse<String>> a = send(port, "/app?mode=plain").whenComplete((x, e) -> done.put("a", System.nanoTime()));
            CompletableFuture<HttpResponse<String>> b = send(port, "/app?mode=plain").whenComplete((x, e) -> done.put("b", System.nanoTime()));
            CompletableFuture<HttpResponse<String>> c = send(port, "/app?mode=plain").whenComplete((x, e) -> done.put("c", System.nanoTime()));
            List<Long> took = new ArrayList<>();
            for (CompletableFuture<HttpResponse<String>> r : List.of(a, b, c)) {
                r.get();
            }
            for (String k : List.of("a", "b", "c")) {
                took.add((done.get(k) - t0) / 1_000_000);
            }
            for (CompletableFuture<HttpResponse<String>> r : List.of(a, b, c)) {
                System.out.println("delay: " + mode + " after-burst " + r.get().headers().firstValue("RateLimit").orElse("-"));
            }
            List<Long> sorted = took.stream().sorted().toList();
            System.out.println("delay: " + mode + " after-burst answered at " + took + " statuses "
                    + a.get().statusCode() + "," + b.get().statusCode() + "," + c.get().statusCode());
            long expectFirstHeld = mode.equals("control") ? 350 : 350; // control: bucket empty, first waits
            if (mode.equals("control")) {
                assertThat(sorted.get(0)).as("control: the burst left the bucket empty").isGreaterThan(200);
            } else {
                assertThat(sorted.get(0)).as("the last held gave back its unit: one passes now").isLessThan(200);
                assertThat(sorted.get(1)).as("only one unit came back: the next waits a slot").isGreaterThan(expectFirstHeld);
            }
        }
    }

    private void dump(String when) {
        try (var jedis = valkey.connect()) {
            for (String key : jedis.keys("*")) {
                String type = jedis.type(key);
                System.out.println("delay: " + when + " " + key + " " + type + " "
                        + (type.equals("hash") ? jedis.hgetAll(key) : type.equals("string") ? jedis.get(key) : "")
                        + " pttl=" + jedis.pttl(key) + " time=" + jedis.time());
            }
        }
    }

    /**
     * One request passes now, the next (held one slot) answers 500 under refund-when=status:5xx
     * (or reports cost 0 under cost-from). Nothing is held after it: its unit should come back, so
     * a third request right after passes now, as it does when the refunded request was not held.
     */
    @ParameterizedTest
    @ValueSource(strings = {"refund-held", "refund-now", "cost-held", "cost-now"})
    void aHeldRequestsRefundWhenNothingIsHeldAfterIt(String mode) throws Exception {
        Map<String, String> settings = mode.startsWith("refund") ? settings("ratelimit.rule.shaped.refund-when", "status:5xx")
                : settings("ratelimit.rule.shaped.cost-from", "header:X-Cost");
        String given = mode.startsWith("refund") ? "/app?mode=plain&status=500" : "/app?mode=plain&cost=0";
        DelayHttpTest.Events events = new DelayHttpTest.Events();
        try (DelayHttpTest.App app = jetty(settings, events, true)) {
            int port = app.port();
            if (mode.endsWith("held")) {
                assertThat(send(port, "/app?mode=plain").get().statusCode()).isEqualTo(200);
            }
            long t1 = System.nanoTime();
            HttpResponse<String> refunded = send(port, given).get();
            long heldMs = (System.nanoTime() - t1) / 1_000_000;
            long t0 = System.nanoTime();
            HttpResponse<String> third = send(port, "/app?mode=plain").get();
            long tookMs = (System.nanoTime() - t0) / 1_000_000;
            System.out.println("delay: " + mode + ": given back request " + refunded.statusCode() + " held " + heldMs
                    + " ms (delayed=" + events.count("shaped", RateLimitListener.Event.DELAYED) + "), next answered in "
                    + tookMs + " ms " + third.headers().firstValue("RateLimit").orElse("-"));
            assertThat(tookMs).as("%s: the given-back unit lets the next pass now", mode).isLessThan(150);
        }
    }

    /** A concurrency rule beside the delaying one: an undeploy with held requests releases their permits. */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void anUndeployReleasesTheHeldRequestsPermits(boolean asyncMapped) throws Exception {
        Map<String, String> settings = settings("ratelimit.rules", "shaped,inflight",
                "ratelimit.rule.inflight.key", "global",
                "ratelimit.rule.inflight.algorithm", "concurrency",
                "ratelimit.rule.inflight.limit", "10",
                "ratelimit.rule.inflight.permit-timeout", "60s");
        DelayHttpTest.Events events = new DelayHttpTest.Events();
        List<CompletableFuture<HttpResponse<String>>> held = new ArrayList<>();
        try (DelayHttpTest.App app = jetty(settings, events, asyncMapped)) {
            int port = app.port();
            assertThat(send(port, "/app?mode=plain").get().statusCode()).isEqualTo(200);
            for (int i = 0; i < 4; i++) {
                held.add(send(port, "/app?mode=plain"));
            }
            DelayJetty.await(() -> events.count("shaped", RateLimitListener.Event.DELAYED) == 4, "four held");
            app.undeploy();
            for (CompletableFuture<HttpResponse<String>> r : held) {
                assertThat(r.get().statusCode()).isEqualTo(503);
            }
        }
        DelayHttpTest.Events after = new DelayHttpTest.Events();
        try (DelayHttpTest.App app = jetty(settings, after, asyncMapped)) {
            HttpResponse<String> next = send(app.port(), "/app?mode=plain").get();
            System.out.println("delay: undeploy asyncMapped=" + asyncMapped + " next " + next.statusCode() + " "
                    + next.headers().firstValue("RateLimit").orElse("-"));
            assertThat(next.headers().firstValue("RateLimit").orElse("")).as("one permit in use: the new request")
                    .contains("\"inflight\";r=9");
        }
    }

    /** A Jetty app with the filter, mapped for every dispatcher type or for REQUEST only, and the test's servlet at /app. */
    private static DelayHttpTest.App jetty(Map<String, String> settings, RateLimitListener listener, boolean asyncMapped)
            throws Exception {
        return DelayHttpTest.App.start(DelayHttpTest.Container.JETTY, settings, listener,
                asyncMapped ? java.util.EnumSet.allOf(jakarta.servlet.DispatcherType.class)
                        : java.util.EnumSet.of(jakarta.servlet.DispatcherType.REQUEST),
                Map.of("/app", new DelayMappingTest.AppServlet()));
    }
}
