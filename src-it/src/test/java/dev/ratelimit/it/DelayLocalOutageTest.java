package dev.ratelimit.it;

import dev.ratelimit.RateLimitListener;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;

import static org.assertj.core.api.Assertions.assertThat;

/** on-failure=local with Valkey stopped while requests are held, and coming back while local ones are held. */
@ExtendWith(ValkeyExtension.class)
class DelayLocalOutageTest {

    private final ValkeyServer valkey;

    DelayLocalOutageTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.start();
        valkey.flushAll();
    }

    record Sent(long nanos, String id, CompletableFuture<HttpResponse<String>> response) {
    }

    private static List<Sent> burst(DelayJetty app, String prefix, int n) {
        List<Sent> sent = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String id = prefix + i;
            sent.add(new Sent(System.nanoTime(), id, app.send("/run", "X-Id", id)));
        }
        return sent;
    }

    @Test
    void heldRequestsSurviveAnOutageAndTheFallbackDelaysAsTheSharedRule() throws Exception {
        DelayJetty.Events events = new DelayJetty.Events();
        ConcurrentLinkedQueue<DelayJetty.Ran> ran = new ConcurrentLinkedQueue<>();
        var settings = JettyApp.settings(valkey.url(), "ratelimit.rules", "shaped",
                "ratelimit.rule.shaped.key", "global",
                "ratelimit.rule.shaped.algorithm", "token-bucket",
                "ratelimit.rule.shaped.limit", "2",
                "ratelimit.rule.shaped.window", "1s",
                "ratelimit.rule.shaped.max-delay", "2s",
                "ratelimit.rule.shaped.on-failure", "local",
                "ratelimit.valkey.timeout", "300ms");
        try (DelayJetty app = DelayJetty.start(DelayJetty.props(settings), events, ran, true)) {
            // Phase 1: Valkey up: 2 now, 4 held (slots 0.5..2 s).
            List<Sent> shared = burst(app, "s", 7);
            DelayJetty.await(() -> events.count("shaped", RateLimitListener.Event.DELAYED) >= 4, "four held");
            valkey.stop();
            List<String> p1 = new ArrayList<>();
            for (Sent s : shared) {
                HttpResponse<String> r = s.response().get();
                p1.add(s.id() + "=" + r.statusCode() + " after " + (ranAt(ran, s.id()) - s.nanos()) / 1_000_000 + "ms "
                        + r.headers().firstValue("RateLimit").orElse("-"));
            }
            System.out.println("delay: phase1 " + p1);
            // Phase 2: Valkey down: the local fallback, a fresh bucket of 2, 2/s, held up to 2 s.
            ran.clear();
            long t2 = System.nanoTime();
            List<Sent> local = burst(app, "l", 9);
            List<String> p2 = new ArrayList<>();
            int ok = 0;
            for (Sent s : local) {
                HttpResponse<String> r = s.response().get();
                long at = ranAt(ran, s.id());
                p2.add(s.id() + "=" + r.statusCode() + (at < 0 ? "" : " after " + (at - s.nanos()) / 1_000_000 + "ms ")
                        + r.headers().firstValue("RateLimit").orElse("-") + " RA=" + r.headers().firstValue("Retry-After").orElse("-"));
                if (r.statusCode() == 200) {
                    ok++;
                    assertThat((at - s.nanos()) / 1_000_000).as("held no longer than max-delay: %s", s.id())
                            .isLessThan(2_000 + 250);
                }
            }
            System.out.println("delay: phase2 " + p2);
            List<Long> times = ran.stream().map(DelayJetty.Ran::nanos).sorted().toList();
            checkBucket(times, 2, 500, t2);
            System.out.println("delay: phase2 ok=" + ok + " DELAYED=" + events.count("shaped", RateLimitListener.Event.DELAYED));
            assertThat(ok).as("the local fallback delays as the shared rule: 2 now, 4 held").isBetween(6, 7);

            // Phase 3: hold some locally, then bring Valkey back while they are held.
            Thread.sleep(2_500);
            ran.clear();
            List<Sent> mixed = burst(app, "m", 5);
            Thread.sleep(100);
            valkey.start();
            Thread.sleep(1_500);
            List<Sent> after = burst(app, "a", 6);
            List<String> p3 = new ArrayList<>();
            List<Sent> all = new ArrayList<>(mixed);
            all.addAll(after);
            for (Sent s : all) {
                HttpResponse<String> r = s.response().get();
                long at = ranAt(ran, s.id());
                p3.add(s.id() + "=" + r.statusCode() + (at < 0 ? "" : " after " + (at - s.nanos()) / 1_000_000 + "ms ")
                        + r.headers().firstValue("RateLimit").orElse("-"));
                if (r.statusCode() == 200) {
                    assertThat((at - s.nanos()) / 1_000_000).as("held no longer than max-delay: %s", s.id())
                            .isLessThan(2_000 + 250);
                }
            }
            System.out.println("delay: phase3 " + p3);
        }
    }

    private static long ranAt(ConcurrentLinkedQueue<DelayJetty.Ran> ran, String id) {
        return ran.stream().filter(r -> id.equals(r.id())).mapToLong(DelayJetty.Ran::nanos).findFirst().orElse(-1);
    }

    /** In any [a, b] at most burst + (b - a) / interval units pass (2 ms slack). */
    private static void checkBucket(List<Long> times, int burst, long intervalMs, long t0) {
        System.out.println("delay: ran since t0 " + times.stream().map(t -> (t - t0) / 1_000_000).toList());
        for (int i = burst; i < times.size(); i++) {
            assertThat((times.get(i) - t0) / 1_000_000).as("the %d-th ran at its slot or later", i)
                    .isGreaterThanOrEqualTo((i - burst + 1) * intervalMs - 1);
        }
    }
}
