package dev.ratelimit.it;

import dev.ratelimit.config.InvalidSettingsException;
import dev.ratelimit.config.MapSettingsSource;
import dev.ratelimit.config.SettingsReader;
import dev.ratelimit.servlet.LimitProvider;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * README, Plans: "While Valkey cannot be reached, a rule with on-failure=local holds every caller
 * to its local-limit per instance, whatever the caller's plan or limit from code". Here on Jetty
 * with a plan header, a {@link LimitProvider}, a cost of 2, the deny cache and eight threads at
 * once, while {@code valkey-server} is killed or paused; then Valkey is back, and each caller's
 * shared limit holds again.
 */
class LocalLimitOutageTest {

    /** Rule 20 units an hour, cost 2, local-limit 6: three requests per caller while Valkey is away. */
    private static final int LOCAL_REQUESTS = 3;
    private static final List<String> CALLERS = List.of("free", "pro", "gold", "plain");
    /** Requests each caller may make on Valkey: free plan 4 units, pro 100, gold (from code) 40, plain 20. */
    private static final Map<String, Integer> SHARED_REQUESTS = Map.of("free", 2, "pro", 50, "gold", 20, "plain", 10);
    private static final Map<String, String> POLICY = Map.of("free", "\"api\";q=4;w=3600",
            "pro", "\"api\";q=100;w=7200", "gold", "\"api\";q=40;w=3600", "plain", "\"api\";q=20;w=3600");

    private static Map<String, String> settings(String url, String... more) {
        Map<String, String> settings = JettyApp.settings(url, "ratelimit.valkey.timeout", "300ms",
                "ratelimit.valkey.connect-timeout", "200ms", "ratelimit.breaker.open-for", "500ms",
                "ratelimit.trusted-proxies", "127.0.0.1/32", "ratelimit.limit-provider.timeout", "2s",
                "ratelimit.rules", "api", "ratelimit.rule.api.algorithm", "sliding-log",
                "ratelimit.rule.api.limit", "20", "ratelimit.rule.api.window", "1h",
                "ratelimit.rule.api.key", "header:X-Caller", "ratelimit.rule.api.cost", "2",
                "ratelimit.rule.api.on-failure", "local", "ratelimit.rule.api.local-limit", "6",
                "ratelimit.rule.api.plan", "header:X-Plan",
                "ratelimit.rule.api.plan.free.limit", "4",
                "ratelimit.rule.api.plan.pro.limit", "100", "ratelimit.rule.api.plan.pro.window", "2h");
        for (int i = 0; i < more.length; i += 2) {
            settings.put(more[i], more[i + 1]);
        }
        return settings;
    }

    /** gold's limit comes from code: 40 units. */
    private static final LimitProvider PROVIDER = (rule, key, principal) ->
            key.startsWith("header.x-caller:gold") ? OptionalLong.of(40) : OptionalLong.empty();

    private static String[] headers(String caller, String suffix) {
        String plan = caller.equals("free") || caller.equals("pro") ? caller : "none";
        return new String[] {"X-Caller", caller + suffix, "X-Plan", plan};
    }

    @Test
    void killedThenRestartedEveryCallerGetsTheLocalLimitThenItsOwnAgain() throws Exception {
        try (ValkeyServer valkey = ValkeyServer.startProcess(List.of());
             JettyApp app = JettyApp.startWithAttributes(settings(valkey.url()),
                     Map.of(LimitProvider.class.getName(), PROVIDER))) {
            for (String caller : CALLERS) {
                HttpResponse<String> first = app.get("/", headers(caller, ""));
                assertThat(first.statusCode()).isEqualTo(200);
                assertThat(first.headers().firstValue("RateLimit-Policy")).as(caller).hasValue(POLICY.get(caller));
            }

            valkey.stop();
            Map<String, List<Integer>> down = hammer(app, "", 10);
            for (String caller : CALLERS) {
                assertThat(down.get(caller)).as("%s while Valkey is down", caller).doesNotContain(500, 503)
                        .filteredOn(s -> s == 200).hasSize(LOCAL_REQUESTS);
            }
            assertThat(app.get("/", headers("other", "")).headers().firstValue("RateLimit-Policy"))
                    .as("the local-limit announced").hasValue("\"api\";q=6;w=3600");

            valkey.start();
            awaitValkey(app);
            Map<String, List<Integer>> back = hammer(app, "", 60 / 8 + 1);
            for (String caller : CALLERS) {
                assertThat(back.get(caller)).as("%s on a restarted, empty Valkey", caller)
                        .filteredOn(s -> s == 200).hasSize(SHARED_REQUESTS.get(caller));
            }
        }
    }

    @Test
    void pausedEveryCallerGetsTheLocalLimitThenItsSharedLimitHoldsAgain() throws Exception {
        try (ValkeyServer valkey = ValkeyServer.startProcess(List.of());
             JettyApp app = JettyApp.startWithAttributes(settings(valkey.url()),
                     Map.of(LimitProvider.class.getName(), PROVIDER))) {
            for (String caller : CALLERS) {
                assertThat(app.get("/", headers(caller, "-p")).statusCode()).isEqualTo(200);
            }
            long pausedUntil = System.currentTimeMillis() + 8_000;
            valkey.pause(Duration.ofMillis(8_000));
            Map<String, List<Integer>> paused = hammer(app, "-p", 4);
            assertThat(System.currentTimeMillis()).as("still paused after the load").isLessThan(pausedUntil);
            for (String caller : CALLERS) {
                assertThat(paused.get(caller)).as("%s while Valkey is paused", caller).doesNotContain(500, 503)
                        .filteredOn(s -> s == 200).hasSize(LOCAL_REQUESTS);
            }
            Thread.sleep(Math.max(0, pausedUntil - System.currentTimeMillis()));
            awaitValkey(app);
            Map<String, List<Integer>> back = hammer(app, "-p", 60 / 8 + 1);
            for (String caller : CALLERS) {
                // The first request was counted; calls that timed out may have run once Valkey woke.
                assertThat(back.get(caller)).as("%s once Valkey answers again", caller)
                        .filteredOn(s -> s == 200).size().isLessThanOrEqualTo(SHARED_REQUESTS.get(caller) - 1);
                assertThat(back.get(caller)).as("%s is held by Valkey again", caller).contains(429);
            }
        }
    }

    /**
     * A cost of 5 under a local-limit of 3: no request of the rule fits the local-limit, and the
     * fallback used to take it as 3 units, letting 5 through. Refused at the start instead, as a
     * plan too small for the cost is, naming the setting, its value and the cost.
     */
    @Test
    void aCostAboveTheLocalLimitIsRefusedAtTheStart() {
        Map<String, String> settings = settings("redis://127.0.0.1:1", "ratelimit.rule.api.cost", "5",
                "ratelimit.rule.api.local-limit", "3", "ratelimit.rule.api.plan.free.limit", "5");
        assertThatThrownBy(() -> SettingsReader.read(new MapSettingsSource(settings)))
                .isInstanceOf(InvalidSettingsException.class)
                .hasMessageContaining("ratelimit.rule.api.local-limit").hasMessageContaining("3")
                .hasMessageContaining("cost (5)");
        settings.put("ratelimit.rule.api.local-limit", "5");
        assertThat(SettingsReader.read(new MapSettingsSource(settings)).rule("api")).isPresent();
    }

    /** Waits until a request of a caller of its own is decided by Valkey (the rule's own limit announced). */
    private static void awaitValkey(JettyApp app) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        HttpResponse<String> probe;
        do {
            Thread.sleep(100);
            probe = app.get("/", "X-Caller", "probe-" + System.nanoTime());
        } while (!probe.headers().firstValue("RateLimit-Policy").orElse("").contains("q=20")
                && System.nanoTime() < deadline);
        assertThat(probe.headers().firstValue("RateLimit-Policy")).as("decided by Valkey").hasValue("\"api\";q=20;w=3600");
    }

    /** Eight threads, each sending {@code rounds} requests for every caller; the statuses per caller. */
    private static Map<String, List<Integer>> hammer(JettyApp app, String suffix, int rounds) throws Exception {
        Map<String, ConcurrentLinkedQueue<Integer>> statuses = new ConcurrentHashMap<>();
        CALLERS.forEach(c -> statuses.put(c, new ConcurrentLinkedQueue<>()));
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        AtomicInteger index = new AtomicInteger();
        for (int t = 0; t < 8; t++) {
            Thread thread = new Thread(() -> {
                int offset = index.getAndIncrement();
                try {
                    go.await();
                    for (int r = 0; r < rounds; r++) {
                        for (int c = 0; c < CALLERS.size(); c++) {
                            String caller = CALLERS.get((c + offset) % CALLERS.size());
                            statuses.get(caller).add(app.get("/", headers(caller, suffix)).statusCode());
                        }
                    }
                } catch (Exception e) {
                    errors.add(e);
                }
            });
            thread.start();
            threads.add(thread);
        }
        go.countDown();
        for (Thread thread : threads) {
            thread.join(120_000);
        }
        assertThat(errors).isEmpty();
        Map<String, List<Integer>> result = new ConcurrentHashMap<>();
        statuses.forEach((caller, list) -> result.put(caller, List.copyOf(list)));
        return result;
    }
}
