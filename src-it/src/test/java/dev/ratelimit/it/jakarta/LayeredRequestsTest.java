package dev.ratelimit.it.jakarta;

import dev.ratelimit.it.ValkeyExtension;
import dev.ratelimit.it.ValkeyServer;
import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The filter's route rules and the annotations' method rules on one request (README, "One
 * request, one account").
 */
@ExtendWith(ValkeyExtension.class)
class LayeredRequestsTest {

    private final ValkeyServer valkey;

    LayeredRequestsTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
        LayeredResources.METHOD_RUNS.set(0);
    }

    /** r1 (route, /e/*, 3 per hour per ip), m1 (method, 1 per user), c1 (method, 2 per account). */
    static Map<String, String> settings(String url, String... overrides) {
        List<String> pairs = new ArrayList<>(List.of("ratelimit.rules", "r1,m1,c1,byid,byuser,login",
                "ratelimit.rule.byid.scope", "method", "ratelimit.rule.byid.limit", "1", "ratelimit.rule.byid.window", "1h",
                "ratelimit.rule.byid.key", "param:id", "ratelimit.rule.byid.algorithm", "fixed-window",
                "ratelimit.rule.byuser.scope", "method", "ratelimit.rule.byuser.limit", "1",
                "ratelimit.rule.byuser.window", "1h", "ratelimit.rule.byuser.key", "param:username",
                "ratelimit.rule.byuser.algorithm", "fixed-window",
                "ratelimit.rule.login.scope", "method", "ratelimit.rule.login.limit", "1",
                "ratelimit.rule.login.window", "1h", "ratelimit.rule.login.key", "param:username",
                "ratelimit.rule.login.algorithm", "fixed-window",
                "ratelimit.rule.r1.match", "/e/*", "ratelimit.rule.r1.algorithm", "fixed-window",
                "ratelimit.rule.r1.limit", "3", "ratelimit.rule.r1.window", "1h", "ratelimit.rule.r1.key", "ip",
                "ratelimit.rule.m1.scope", "method", "ratelimit.rule.m1.algorithm", "fixed-window",
                "ratelimit.rule.m1.limit", "1", "ratelimit.rule.m1.window", "1h", "ratelimit.rule.m1.key", "param:user",
                "ratelimit.rule.c1.scope", "method", "ratelimit.rule.c1.algorithm", "fixed-window",
                "ratelimit.rule.c1.limit", "2", "ratelimit.rule.c1.window", "1h", "ratelimit.rule.c1.key", "param:acct"));
        pairs.addAll(List.of(overrides));
        return JakartaApp.settings(url, pairs.toArray(String[]::new));
    }

    static String field(HttpResponse<?> response, String name) {
        return String.join(" | ", response.headers().allValues(name));
    }

    private static String describe(HttpResponse<String> r) {
        return r.statusCode() + " RateLimit=[" + field(r, "RateLimit") + "] Policy=[" + field(r, "RateLimit-Policy")
                + "] body=" + r.body();
    }

    @Test
    void fieldsNameEveryRuleOnceInOrderAcrossThreeLayers() throws Exception {
        try (JakartaApp plain = JakartaApp.start(settings(valkey.url()), false);
             WeldContainer weld = Welds.weld(plain, LayeredBean.class, CurrentRequest.class);
             JakartaApp app = JakartaApp.start(settings(valkey.url()), true,
                     new LayeredResources.E(weld.select(LayeredBean.class).get()))) {
            HttpResponse<String> r = app.get("/e/mc/alice?acct=1");
            assertThat(r.statusCode()).as(describe(r)).isEqualTo(200);
            assertThat(r.headers().allValues("RateLimit-Policy")).as(describe(r)).containsExactly(
                    "\"r1\";q=3;w=3600, \"m1\";q=1;w=3600, \"c1\";q=2;w=3600");
            assertThat(r.headers().allValues("RateLimit")).hasSize(1);
            assertThat(field(r, "RateLimit")).as(describe(r)).matches(
                    "\"r1\";r=2;t=\\d+, \"m1\";r=0;t=\\d+, \"c1\";r=1;t=\\d+");
        }
    }

    @Test
    void methodRefusalGivesBackWhatTheFilterTook() throws Exception {
        try (JakartaApp app = JakartaApp.start(settings(valkey.url()), true, LayeredResources.E.class)) {
            assertThat(app.get("/e/m/alice").statusCode()).isEqualTo(200);
            for (int i = 0; i < 4; i++) {
                HttpResponse<String> refused = app.get("/e/m/alice");
                assertThat(refused.statusCode()).as(describe(refused)).isEqualTo(429);
                assertThat(refused.body()).contains("\"violated-policies\":[\"m1\"]");
                assertThat(field(refused, "RateLimit")).as(describe(refused)).matches(
                        "\"r1\";r=2;t=\\d+, \"m1\";r=0;t=\\d+");
            }
            assertThat(LayeredResources.METHOD_RUNS.get()).isEqualTo(1);
            // r1 has 2 of 3 left.
            assertThat(app.get("/e/free").statusCode()).isEqualTo(200);
            assertThat(app.get("/e/free").statusCode()).isEqualTo(200);
            assertThat(app.get("/e/free").statusCode()).isEqualTo(429);
        }
    }

    @Test
    void filterRefusalNeverReachesTheMethod() throws Exception {
        try (JakartaApp app = JakartaApp.start(settings(valkey.url()), true, LayeredResources.E.class)) {
            for (int i = 0; i < 3; i++) {
                assertThat(app.get("/e/free").statusCode()).isEqualTo(200);
            }
            HttpResponse<String> refused = app.get("/e/m/bob");
            assertThat(refused.statusCode()).isEqualTo(429);
            assertThat(refused.body()).contains("\"violated-policies\":[\"r1\"]");
            assertThat(field(refused, "RateLimit-Policy")).isEqualTo("\"r1\";q=3;w=3600");
            assertThat(LayeredResources.METHOD_RUNS.get()).isZero();
            try (var jedis = valkey.connect()) {
                assertThat(jedis.keys("*m1*")).isEmpty();
            }
        }
    }

    @Test
    void countRejectedRouteRuleKeepsItsAttemptOnAMethodRefusal() throws Exception {
        try (JakartaApp app = JakartaApp.start(settings(valkey.url(), "ratelimit.rule.r1.count-rejected", "true"), true,
                LayeredResources.E.class)) {
            assertThat(app.get("/e/m/alice").statusCode()).isEqualTo(200);
            assertThat(app.get("/e/m/alice").statusCode()).isEqualTo(429);
            assertThat(app.get("/e/m/alice").statusCode()).isEqualTo(429);
            // Three attempts recorded by r1: the fourth request is refused by r1.
            HttpResponse<String> r = app.get("/e/free");
            assertThat(r.statusCode()).as(describe(r)).isEqualTo(429);
        }
    }

    @Test
    void refundWhenRouteRuleIsGivenBackOnAMethodRefusal() throws Exception {
        try (JakartaApp app = JakartaApp.start(settings(valkey.url(), "ratelimit.rule.r1.refund-when", "status:5xx"), true,
                LayeredResources.E.class)) {
            assertThat(app.get("/e/m/alice").statusCode()).isEqualTo(200);
            for (int i = 0; i < 3; i++) {
                HttpResponse<String> r = app.get("/e/m/alice");
                assertThat(r.statusCode()).isEqualTo(429);
                assertThat(field(r, "RateLimit")).as(describe(r)).startsWith("\"r1\";r=2;");
            }
            assertThat(app.get("/e/free").statusCode()).isEqualTo(200);
            assertThat(app.get("/e/free").statusCode()).isEqualTo(200);
            assertThat(app.get("/e/free").statusCode()).isEqualTo(429);
        }
    }

    @Test
    void countWhenRouteRuleWithAMethodRefusal() throws Exception {
        try (JakartaApp app = JakartaApp.start(settings(valkey.url(), "ratelimit.rule.r1.count-when", "status:2xx"), true,
                LayeredResources.E.class)) {
            assertThat(app.get("/e/m/alice").statusCode()).isEqualTo(200);
            for (int i = 0; i < 3; i++) {
                HttpResponse<String> r = app.get("/e/m/alice");
                assertThat(r.statusCode()).isEqualTo(429);
                assertThat(field(r, "RateLimit")).as(describe(r)).startsWith("\"r1\";r=2;");
            }
            assertThat(app.get("/e/free").statusCode()).isEqualTo(200);
            assertThat(app.get("/e/free").statusCode()).isEqualTo(200);
            assertThat(app.get("/e/free").statusCode()).isEqualTo(429);
        }
    }

    @Test
    void concurrencyRouteRuleReleasedOnceOnAMethodRefusal() throws Exception {
        try (JakartaApp app = JakartaApp.start(settings(valkey.url(), "ratelimit.rule.r1.algorithm", "concurrency",
                "ratelimit.rule.r1.window", "", "ratelimit.rule.r1.limit", "2"), true, LayeredResources.E.class)) {
            assertThat(app.get("/e/m/alice").statusCode()).isEqualTo(200);
            for (int i = 0; i < 5; i++) {
                HttpResponse<String> r = app.get("/e/m/alice");
                assertThat(r.statusCode()).isEqualTo(429);
                assertThat(field(r, "RateLimit")).as(describe(r)).startsWith("\"r1\";r=2");
            }
            // One held in progress; a refusal by the method must not free the held one's slot.
            LayeredResources.entered = new CountDownLatch(1);
            LayeredResources.release = new CountDownLatch(1);
            CompletableFuture<HttpResponse<String>> held = CompletableFuture.supplyAsync(() -> {
                try {
                    return app.get("/e/slow");
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            assertThat(LayeredResources.entered.await(10, TimeUnit.SECONDS)).isTrue();
            for (int i = 0; i < 3; i++) {
                HttpResponse<String> r = app.get("/e/m/alice");
                assertThat(r.statusCode()).isEqualTo(429);
                assertThat(field(r, "RateLimit")).as(describe(r)).startsWith("\"r1\";r=1");
            }
            LayeredResources.entered = new CountDownLatch(1);
            CompletableFuture<HttpResponse<String>> second = CompletableFuture.supplyAsync(() -> {
                try {
                    return app.get("/e/slow");
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            assertThat(LayeredResources.entered.await(10, TimeUnit.SECONDS)).isTrue();
            HttpResponse<String> third = app.get("/e/free");
            assertThat(third.statusCode()).as(describe(third)).isEqualTo(429);
            LayeredResources.release.countDown();
            assertThat(held.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
            assertThat(second.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
            assertThat(app.get("/e/free").statusCode()).isEqualTo(200);
        }
    }

    @Test
    void cdiRefusalMappedGivesBackFilterAndResourceButKeepsEarlierCalls() throws Exception {
        try (JakartaApp plain = JakartaApp.start(settings(valkey.url()), false);
             WeldContainer weld = Welds.weld(plain, LayeredBean.class, CurrentRequest.class);
             JakartaApp app = JakartaApp.start(settings(valkey.url()), true,
                     new LayeredResources.E(weld.select(LayeredBean.class).get()))) {
            HttpResponse<String> r = app.get("/e/mc/alice?acct=7&n=3");
            assertThat(r.statusCode()).as(describe(r)).isEqualTo(429);
            assertThat(r.body()).contains("\"violated-policies\":[\"c1\"]");
            // r1 and m1 were given back; c1's two calls that returned keep theirs.
            assertThat(field(r, "RateLimit")).as(describe(r)).matches(
                    "\"r1\";r=3;t=\\d+, \"m1\";r=1;t=\\d+, \"c1\";r=0;t=\\d+");
            HttpResponse<String> again = app.get("/e/mc/alice?acct=8&n=1");
            assertThat(again.statusCode()).as(describe(again)).isEqualTo(200);
            assertThat(field(again, "RateLimit")).as(describe(again)).matches(
                    "\"r1\";r=2;t=\\d+, \"m1\";r=0;t=\\d+, \"c1\";r=1;t=\\d+");
        }
    }

    @Test
    void cdiRefusalCaughtKeepsTheRequest() throws Exception {
        try (JakartaApp plain = JakartaApp.start(settings(valkey.url()), false);
             WeldContainer weld = Welds.weld(plain, LayeredBean.class, CurrentRequest.class);
             JakartaApp app = JakartaApp.start(settings(valkey.url()), true,
                     new LayeredResources.E(weld.select(LayeredBean.class).get()))) {
            HttpResponse<String> r = app.get("/e/cdi?acct=7&n=3&catch=true");
            assertThat(r.statusCode()).as(describe(r)).isEqualTo(200);
            assertThat(r.body()).isEqualTo("caught after 2");
            assertThat(field(r, "RateLimit")).as(describe(r)).matches("\"r1\";r=2;t=\\d+, \"c1\";r=0;t=\\d+");
        }
    }

    @Test
    void cdiRefusalWrappedByTheApplicationUnderJakartaRestIsItsOwnFailure() throws Exception {
        // README: a refusal the application wraps in an exception of its own is its failure (Jakarta
        // REST answers it 500 before the filter sees it): the request counts, as one that caught it.
        try (JakartaApp plain = JakartaApp.start(settings(valkey.url()), false);
             WeldContainer weld = Welds.weld(plain, LayeredBean.class, CurrentRequest.class);
             JakartaApp app = JakartaApp.start(settings(valkey.url()), true,
                     new LayeredResources.E(weld.select(LayeredBean.class).get()))) {
            HttpResponse<String> r = app.get("/e/cdi?acct=7&n=3&wrap=true");
            assertThat(r.statusCode()).as(describe(r)).isEqualTo(500);
            assertThat(field(r, "RateLimit")).as(describe(r)).startsWith("\"r1\";r=2;");
        }
    }

    @Test
    void cdiRefusalUnmappedEscapingJerseyIsTheFiltersOwn429() throws Exception {
        try (JakartaApp plain = JakartaApp.start(settings(valkey.url()), false);
             WeldContainer weld = Welds.weld(plain, LayeredBean.class, CurrentRequest.class)) {
            JakartaApp.withMapper = false;
            try (JakartaApp app = JakartaApp.start(settings(valkey.url()), true,
                    new LayeredResources.E(weld.select(LayeredBean.class).get()))) {
                HttpResponse<String> r = app.get("/e/cdi?acct=7&n=3");
                assertThat(r.statusCode()).as(describe(r)).isEqualTo(429);
                assertThat(field(r, "RateLimit")).as(describe(r)).matches("\"r1\";r=3;t=\\d+, \"c1\";r=0;t=\\d+");
            }
        }
    }

    /** README: a CDI refusal "reaching the filter uncaught, which answers it as its own 429 ... rather than a 500". */
    @Test
    void cdiRefusalUncaughtByAPlainServletIsTheFiltersOwn429() throws Exception {
        try (JakartaApp plain = JakartaApp.start(settings(valkey.url()), false);
             WeldContainer weld = Welds.weld(plain, LayeredBean.class, CurrentRequest.class)) {
            JakartaApp.servlets = Map.of("/e/servlet", new LayeredResources.CallingServlet(weld.select(LayeredBean.class).get()));
            try (JakartaApp app = JakartaApp.start(settings(valkey.url()), true, LayeredResources.E.class)) {
                HttpResponse<String> r = app.get("/e/servlet?acct=3&n=3");
                assertThat(r.statusCode()).as(describe(r)).isEqualTo(429);
                assertThat(field(r, "RateLimit")).as(describe(r)).matches("\"r1\";r=3;t=\\d+, \"c1\";r=0;t=\\d+");
            }
        }
    }

    /** The fields on a 500 Jakarta REST answers for an exception of the application's. */
    @Test
    void fieldsOnA500AfterACdiCall() throws Exception {
        try (JakartaApp plain = JakartaApp.start(settings(valkey.url()), false);
             WeldContainer weld = Welds.weld(plain, LayeredBean.class, CurrentRequest.class);
             JakartaApp app = JakartaApp.start(settings(valkey.url()), true,
                     new LayeredResources.E(weld.select(LayeredBean.class).get()))) {
            HttpResponse<String> r = app.get("/e/cdi?acct=4&n=1&boom=true");
            assertThat(r.statusCode()).as(describe(r)).isEqualTo(500);
            assertThat(field(r, "RateLimit")).as(describe(r)).matches("\"r1\";r=2;t=\\d+, \"c1\";r=1;t=\\d+");
        }
    }

    /** A route rule of concurrency holds its slot while an annotated async method works. */
    @Test
    void asyncAnnotatedMethodHoldsTheRouteRulesLease() throws Exception {
        try (JakartaApp app = JakartaApp.start(settings(valkey.url(), "ratelimit.rule.r1.algorithm", "concurrency",
                "ratelimit.rule.r1.window", "", "ratelimit.rule.r1.limit", "1"), true, LayeredResources.E.class)) {
            LayeredResources.entered = new CountDownLatch(1);
            LayeredResources.release = new CountDownLatch(1);
            CompletableFuture<HttpResponse<String>> held = CompletableFuture.supplyAsync(() -> {
                try {
                    return app.get("/e/async/alice");
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            assertThat(LayeredResources.entered.await(10, TimeUnit.SECONDS)).isTrue();
            HttpResponse<String> busy = app.get("/e/free");
            assertThat(busy.statusCode()).as(describe(busy)).isEqualTo(429);
            LayeredResources.release.countDown();
            HttpResponse<String> done = held.get(10, TimeUnit.SECONDS);
            assertThat(done.statusCode()).as(describe(done)).isEqualTo(200);
            assertThat(field(done, "RateLimit")).as(describe(done)).matches("\"r1\";r=0(;t=\\d+)?, \"m1\";r=0;t=\\d+");
            // The permit goes back when the async request completes, which may be just after its
            // response reached the client: the slot is waited for, within a bound.
            HttpResponse<String> free = app.get("/e/free");
            long deadline = System.nanoTime() + java.time.Duration.ofSeconds(5).toNanos();
            while (free.statusCode() == 429 && System.nanoTime() < deadline) {
                Thread.sleep(10);
                free = app.get("/e/free");
            }
            assertThat(free.statusCode()).as(describe(free)).isEqualTo(200);
            // Refused by m1 (async method): the slot comes back.
            HttpResponse<String> refused = app.get("/e/async/alice");
            assertThat(refused.statusCode()).as(describe(refused)).isEqualTo(429);
            assertThat(app.get("/e/free").statusCode()).isEqualTo(200);
        }
    }

    /** Many method refusals at once: the route rule keeps exactly the one allowed request. */
    @Test
    void concurrentMethodRefusalsGiveBackExactly() throws Exception {
        try (JakartaApp app = JakartaApp.start(settings(valkey.url(), "ratelimit.rule.r1.limit", "100",
                "ratelimit.rule.r1.algorithm", "sliding-log"), true, LayeredResources.E.class)) {
            List<CompletableFuture<Integer>> all = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                all.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        return app.get("/e/m/alice").statusCode();
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                }));
            }
            List<Integer> statuses = all.stream().map(CompletableFuture::join).toList();
            assertThat(statuses.stream().filter(s -> s == 200).count()).as(statuses.toString()).isEqualTo(1);
            HttpResponse<String> after = app.get("/e/free");
            assertThat(field(after, "RateLimit")).as(describe(after)).startsWith("\"r1\";r=98;");
        }
    }

    /** An annotation naming a route rule fails the start, naming the method and the scope setting (held?). */
    @Test
    void anAnnotationNamingARouteRuleFailsTheStart() throws Exception {
        Map<String, String> s = settings(valkey.url());
        s.remove("ratelimit.rule.m1.scope");
        try {
            JakartaApp.start(s, true, LayeredResources.E.class).close();
            org.assertj.core.api.Assertions.fail("started");
        } catch (Exception e) {
            assertThat(RestAnnotationTest.causes(e)).contains("@RateLimited(\"m1\")", "LayeredResources$E.",
                    "ratelimit.rule.m1.scope");
        }
    }

    /** A method rule with match set is refused as a settings problem (held?). */
    @Test
    void aMethodRuleWithMatchIsRefused() throws Exception {
        try {
            JakartaApp.start(settings(valkey.url(), "ratelimit.rule.m1.match", "/e/*"), true, LayeredResources.E.class).close();
            org.assertj.core.api.Assertions.fail("started");
        } catch (Exception e) {
            assertThat(RestAnnotationTest.causes(e)).contains("ratelimit.rule.m1.match");
        }
    }

    /** count-when listing 429 without count-rejected: a rejected request takes nothing of it. */
    @Test
    void countWhen429WithoutCountRejectedIsGivenBackOnAMethodRefusal() throws Exception {
        try (JakartaApp app = JakartaApp.start(settings(valkey.url(), "ratelimit.rule.r1.count-when", "status:200,429"), true,
                LayeredResources.E.class)) {
            assertThat(app.get("/e/m/alice").statusCode()).isEqualTo(200);
            for (int i = 0; i < 3; i++) {
                assertThat(app.get("/e/m/alice").statusCode()).isEqualTo(429);
            }
            assertThat(app.get("/e/free").statusCode()).isEqualTo(200);
            assertThat(app.get("/e/free").statusCode()).isEqualTo(200);
            assertThat(app.get("/e/free").statusCode()).isEqualTo(429);
        }
    }

    /** count-when listing 429 with count-rejected: the method's refusal is an attempt r1 keeps. */
    @Test
    void countWhen429WithCountRejectedKeepsTheAttemptOnAMethodRefusal() throws Exception {
        try (JakartaApp app = JakartaApp.start(settings(valkey.url(), "ratelimit.rule.r1.count-when", "status:200,429",
                "ratelimit.rule.r1.count-rejected", "true"), true, LayeredResources.E.class)) {
            assertThat(app.get("/e/m/alice").statusCode()).isEqualTo(200);
            assertThat(app.get("/e/m/alice").statusCode()).isEqualTo(429);
            assertThat(app.get("/e/m/alice").statusCode()).isEqualTo(429);
            HttpResponse<String> r = app.get("/e/free");
            assertThat(r.statusCode()).as(describe(r)).isEqualTo(429);
        }
    }

    /** A concurrency method rule's lease goes back once when a CDI call's refusal is the answer. */
    @Test
    void aConcurrencyMethodRuleIsReleasedWhenACdiRefusalIsMapped() throws Exception {
        Map<String, String> s = settings(valkey.url(), "ratelimit.rule.m1.algorithm", "concurrency",
                "ratelimit.rule.m1.window", "", "ratelimit.rule.r1.limit", "100");
        try (JakartaApp plain = JakartaApp.start(s, false);
             WeldContainer weld = Welds.weld(plain, LayeredBean.class, CurrentRequest.class);
             JakartaApp app = JakartaApp.start(s, true, new LayeredResources.E(weld.select(LayeredBean.class).get()))) {
            HttpResponse<String> refused = app.get("/e/mc/alice?acct=9&n=3");
            assertThat(refused.statusCode()).as(describe(refused)).isEqualTo(429);
            for (int i = 0; i < 3; i++) {
                HttpResponse<String> r = app.get("/e/mc/alice?acct=" + (20 + i) + "&n=1");
                assertThat(r.statusCode()).as(describe(r)).isEqualTo(200);
            }
        }
    }
}
