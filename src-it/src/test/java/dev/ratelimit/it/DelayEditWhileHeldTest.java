package dev.ratelimit.it;

import dev.ratelimit.RateLimitListener;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A rule edited (10/s to 11/s, the same window and burst) while 50 requests are held for slots up
 * to 5 s away: the edited rule reads the whole queue the old one left (60 units, more than the two
 * buckets an edited bucket otherwise reads), so new requests queue behind the held ones and the
 * pass times keep either rule's bound.
 */
@ExtendWith(ValkeyExtension.class)
class DelayEditWhileHeldTest {

    private final ValkeyServer valkey;

    DelayEditWhileHeldTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @Test
    void anEditWhileRequestsAreHeldLetsNewOnesPassBesideThem() throws Exception {
        valkey.start();
        valkey.flushAll();
        EditableConfigSource source = new EditableConfigSource("delay", 100);
        source.values.putAll(JettyApp.settings(valkey.url(),
                "ratelimit.rules", "api",
                "ratelimit.rule.api.key", "global",
                "ratelimit.rule.api.algorithm", "token-bucket",
                "ratelimit.rule.api.limit", "10",
                "ratelimit.rule.api.window", "1s",
                "ratelimit.rule.api.max-delay", "5s",
                "ratelimit.deny-cache.enabled", "false",
                "ratelimit.refresh", "100ms"));
        ConcurrentLinkedQueue<DelayJetty.Ran> ran = new ConcurrentLinkedQueue<>();
        DelayJetty.Events events = new DelayJetty.Events();
        try (DelayJetty app = DelayJetty.start(source, events, ran, true)) {
            List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
            long t0 = System.nanoTime();
            for (int i = 0; i < 60; i++) {
                all.add(app.send("/old", "X-Id", "old" + i));
            }
            DelayJetty.await(() -> events.count("api", RateLimitListener.Event.ALLOWED)
                    + events.count("api", RateLimitListener.Event.REJECTED) >= 60, "60 decided");
            System.out.println("decided 60 after " + (System.nanoTime() - t0) / 1_000_000 + " ms; delayed="
                    + events.count("api", RateLimitListener.Event.DELAYED) + " rejected="
                    + events.count("api", RateLimitListener.Event.REJECTED));
            source.values.put("ratelimit.rule.api.limit", "11");
            // wait for the refresh to apply: a policy header with q=11
            long deadline = System.nanoTime() + 5_000_000_000L;
            int probes = 0;
            while (true) {
                Thread.sleep(150);
                // a probe is itself a request (it may be held): kept in the runs
                CompletableFuture<HttpResponse<String>> probe = app.send("/probe", "X-Id", "probe" + probes++);
                all.add(probe);
                // the header is written before the hold? only on the response; use the events instead
                if (probes >= 3 || System.nanoTime() > deadline) {
                    break;
                }
            }
            long tEdit = System.nanoTime();
            for (int i = 0; i < 30; i++) {
                all.add(app.send("/new", "X-Id", "new" + i));
            }
            int ok = 0;
            int refused = 0;
            List<String> policies = new ArrayList<>();
            for (CompletableFuture<HttpResponse<String>> r : all) {
                HttpResponse<String> done = r.get();
                if (done.statusCode() == 200) {
                    ok++;
                } else {
                    refused++;
                }
                policies.add(done.headers().firstValue("RateLimit-Policy").orElse("-"));
            }
            System.out.println("ok=" + ok + " refused=" + refused + " policies(last)=" + policies.get(policies.size() - 1));
            List<DelayJetty.Ran> runs = ran.stream().sorted((x, y) -> Long.compare(x.nanos(), y.nanos())).toList();
            for (DelayJetty.Ran r : runs) {
                System.out.printf("ran %s at +%d ms%n", r.id(), (r.nanos() - t0) / 1_000_000);
            }
            // The more generous of the two rules: burst 10, 11 per second.
            int worstExcess = 0;
            String where = "";
            for (int i = 0; i < runs.size(); i++) {
                for (int j = i; j < runs.size(); j++) {
                    double span = (runs.get(j).nanos() - runs.get(i).nanos()) / 1e6;
                    double bound = 10 + 11 * span / 1000.0;
                    int units = j - i + 1;
                    int excess = (int) Math.floor(units - bound);
                    if (excess > worstExcess) {
                        worstExcess = excess;
                        where = runs.get(i).id() + ".." + runs.get(j).id() + ": " + units + " units in "
                                + Math.round(span) + " ms, bound " + Math.round(bound * 10) / 10.0;
                    }
                }
            }
            System.out.println("worst: " + where + " (edit at +" + (tEdit - t0) / 1_000_000 + " ms)");
            assertThat(worstExcess).as("pass-time bound of the edited rule (burst 10, 11/s): " + where)
                    .isLessThanOrEqualTo(1);
        }
    }
}
