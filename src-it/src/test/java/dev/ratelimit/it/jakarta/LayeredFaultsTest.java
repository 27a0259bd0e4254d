package dev.ratelimit.it.jakarta;

import dev.ratelimit.it.ValkeyExtension;
import dev.ratelimit.it.ValkeyServer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Both layers on a request while Valkey is away, and with local leases. */
@ExtendWith(ValkeyExtension.class)
class LayeredFaultsTest {

    private final ValkeyServer valkey;

    LayeredFaultsTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
        LayeredResources.METHOD_RUNS.set(0);
    }

    private static String describe(HttpResponse<String> r) {
        return r.statusCode() + " RateLimit=[" + LayeredRequestsTest.field(r, "RateLimit") + "] Policy=["
                + LayeredRequestsTest.field(r, "RateLimit-Policy") + "] body=" + r.body();
    }

    /** README, Local leases: "units taken from a lease go back to it if another rule rejects the request". */
    @Test
    void aLeaseOfTheRouteRuleIsNotDrainedByMethodRefusals() throws Exception {
        try (JakartaApp app = JakartaApp.start(LayeredRequestsTest.settings(valkey.url(), "ratelimit.rule.r1.limit", "10",
                "ratelimit.rule.r1.local-lease", "5", "ratelimit.rule.r1.local-lease-time", "500ms"), true,
                LayeredResources.E.class)) {
            assertThat(app.get("/e/m/alice").statusCode()).isEqualTo(200);
            List<String> seen = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                HttpResponse<String> r = app.get("/e/m/alice");
                assertThat(r.statusCode()).isEqualTo(429);
                seen.add(LayeredRequestsTest.field(r, "RateLimit").replaceAll(";t=\\d+", ""));
            }
            assertThat(seen).as("r1 as the refusals describe it").containsOnly("\"r1\";r=9, \"m1\";r=0");
            Thread.sleep(1500);
            int allowed = 0;
            HttpResponse<String> r;
            while ((r = app.get("/e/free")).statusCode() == 200 && allowed < 20) {
                allowed++;
            }
            assertThat(allowed).as("r1 units left after 20 method refusals; last " + describe(r)).isEqualTo(9);
        }
    }

    /**
     * on-failure=local on both layers while Valkey is down: a method refusal gives back what the
     * filter's in-process decision took, as one call of both rules would.
     */
    @Test
    void aLocalDecisionOfTheFilterIsGivenBackOnAMethodRefusal() throws Exception {
        try (JakartaApp app = JakartaApp.start(LayeredRequestsTest.settings(valkey.url(), "ratelimit.valkey.timeout", "100ms",
                "ratelimit.rule.r1.on-failure", "local", "ratelimit.rule.m1.on-failure", "local"), true,
                LayeredResources.E.class)) {
            valkey.stop();
            try {
                HttpResponse<String> first = app.get("/e/m/alice");
                assertThat(first.statusCode()).as(describe(first)).isEqualTo(200);
                for (int i = 0; i < 3; i++) {
                    HttpResponse<String> r = app.get("/e/m/alice");
                    assertThat(r.statusCode()).as(describe(r)).isEqualTo(429);
                    assertThat(LayeredRequestsTest.field(r, "RateLimit")).as(describe(r)).startsWith("\"r1\";r=2;");
                }
                HttpResponse<String> a = app.get("/e/free");
                assertThat(a.statusCode()).as(describe(a)).isEqualTo(200);
                HttpResponse<String> b = app.get("/e/free");
                assertThat(b.statusCode()).as(describe(b)).isEqualTo(200);
                assertThat(app.get("/e/free").statusCode()).isEqualTo(429);
            } finally {
                valkey.start();
            }
        }
    }

    /** A closed method rule while Valkey is paused: 503; the open route rule let it through undecided. */
    @Test
    void aClosedMethodRuleWhileValkeyIsPausedAnswers503() throws Exception {
        try (JakartaApp app = JakartaApp.start(LayeredRequestsTest.settings(valkey.url(), "ratelimit.valkey.timeout", "100ms",
                "ratelimit.rule.m1.on-failure", "closed"), true, LayeredResources.E.class)) {
            assertThat(app.get("/e/free").statusCode()).isEqualTo(200);
            valkey.pause(Duration.ofSeconds(2));
            long start = System.nanoTime();
            HttpResponse<String> r = app.get("/e/m/alice");
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertThat(r.statusCode()).as(describe(r)).isEqualTo(503);
            assertThat(r.body()).contains("temporary-reduced-capacity", "\"violated-policies\":[\"m1\"]");
            assertThat(LayeredRequestsTest.field(r, "RateLimit")).as(describe(r)).isEmpty();
            assertThat(ms).isLessThan(1000);
            assertThat(LayeredResources.METHOD_RUNS.get()).isZero();
        }
    }

    /**
     * The filter decided r1 in-process (Valkey down, local-limit 3 of a limit of 10); Valkey is back
     * when a CDI call is refused and the request's units go back. The fields must still describe
     * r1 consistently: r never more than q (README, "r the units remaining, never more than q").
     */
    @Test
    void aRouteRuleDecidedLocallyIsRedescribedWithinItsQuota() throws Exception {
        Map<String, String> settings = LayeredRequestsTest.settings(valkey.url(), "ratelimit.valkey.timeout", "100ms",
                "ratelimit.rule.r1.limit", "10", "ratelimit.rule.r1.on-failure", "local",
                "ratelimit.rule.r1.local-limit", "3");
        try (JakartaApp plain = JakartaApp.start(settings, false);
             org.jboss.weld.environment.se.WeldContainer weld = Welds.weld(plain, LayeredBean.class, CurrentRequest.class);
             JakartaApp app = JakartaApp.start(settings, true, new LayeredResources.E(weld.select(LayeredBean.class).get()))) {
            LayeredResources.entered = new java.util.concurrent.CountDownLatch(1);
            LayeredResources.release = new java.util.concurrent.CountDownLatch(1);
            valkey.stop();
            java.util.concurrent.CompletableFuture<HttpResponse<String>> request =
                    java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                        try {
                            return app.get("/e/cdiwait?acct=1&n=6");
                        } catch (Exception e) {
                            throw new RuntimeException(e);
                        }
                    });
            try {
                assertThat(LayeredResources.entered.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            } finally {
                valkey.start();
            }
            Thread.sleep(500);
            LayeredResources.release.countDown();
            HttpResponse<String> r = request.get(20, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(r.statusCode()).as(describe(r)).isEqualTo(429);
            java.util.regex.Matcher q = java.util.regex.Pattern.compile("\"r1\";q=(\\d+)")
                    .matcher(LayeredRequestsTest.field(r, "RateLimit-Policy"));
            java.util.regex.Matcher rem = java.util.regex.Pattern.compile("\"r1\";r=(\\d+)")
                    .matcher(LayeredRequestsTest.field(r, "RateLimit"));
            assertThat(q.find() && rem.find()).as(describe(r)).isTrue();
            assertThat(Long.parseLong(rem.group(1))).as(describe(r)).isLessThanOrEqualTo(Long.parseLong(q.group(1)));
        }
    }

    /**
     * The filter took r1's unit from Valkey; Valkey dies before a closed CDI rule refuses the
     * request (503). r1's give-back cannot reach Valkey (dropped: the unit stays counted, as the
     * README says). The fields must then not describe r1 with a full quota it does not have
     * (README: "rules given back by a refusal are described as they are after it"; the code's
     * own comment: a rule whose state is not known "announces nothing rather than a stale count").
     */
    @Test
    void aRouteRuleWhoseGiveBackWasDroppedIsNotDescribedAsFull() throws Exception {
        Map<String, String> settings = LayeredRequestsTest.settings(valkey.url(), "ratelimit.valkey.timeout", "100ms",
                "ratelimit.rule.c1.on-failure", "closed");
        try (JakartaApp plain = JakartaApp.start(settings, false);
             org.jboss.weld.environment.se.WeldContainer weld = Welds.weld(plain, LayeredBean.class, CurrentRequest.class);
             JakartaApp app = JakartaApp.start(settings, true, new LayeredResources.E(weld.select(LayeredBean.class).get()))) {
            LayeredResources.entered = new java.util.concurrent.CountDownLatch(1);
            LayeredResources.release = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.CompletableFuture<HttpResponse<String>> request =
                    java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                        try {
                            return app.get("/e/cdiwait?acct=1&n=1");
                        } catch (Exception e) {
                            throw new RuntimeException(e);
                        }
                    });
            assertThat(LayeredResources.entered.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            valkey.stop();
            HttpResponse<String> r;
            try {
                LayeredResources.release.countDown();
                r = request.get(20, java.util.concurrent.TimeUnit.SECONDS);
            } finally {
                valkey.start();
            }
            assertThat(r.statusCode()).as(describe(r)).isEqualTo(503);
            assertThat(LayeredRequestsTest.field(r, "RateLimit")).as(describe(r)).doesNotContain("\"r1\";r=3");
        }
    }
}
