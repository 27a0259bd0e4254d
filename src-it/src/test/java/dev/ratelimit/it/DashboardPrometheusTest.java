package dev.ratelimit.it;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The dashboard and the alert rules against the real thing: a valkey-server, the example WAR in
 * a process of its own configured by environment variables, and a Prometheus scraping it every
 * second with the alert rules loaded. A scripted load (allowed, rejected, near-limit, a shadow
 * rule, local leases) runs before, during and after a Valkey outage (the server killed, then
 * started again on the same port). Then, through Prometheus's HTTP API: the store-unreachable
 * alert fired during the outage and never before it, every variable of the dashboard has
 * values, and every query of every panel returns data.
 *
 * <p>Only the alerts' {@code for:} durations are shortened (to {@value #FOR}): the test cannot
 * wait minutes, and what is tested is that the expressions hold in an outage and not otherwise.
 *
 * <p>With {@code -Ddashboard.png=path} the panels' data are drawn to that PNG
 * ({@link DashboardPicture}): the README's picture, {@code docs/images/dashboard.png}.
 */
class DashboardPrometheusTest {

    private static final String FOR = "3s";
    private static final String JOB = "ratelimit-example";
    private static final String STORE_ALERT = "RateLimitStoreUnreachable";

    /**
     * The example's own rules, with a local lease on {@code search} and a shadow rule
     * {@code trial} added, so that every outcome the dashboard shows happens. The timeouts are
     * patient: on a busy machine a 50 ms call may miss now and then, and a store error before
     * the outage would be one the test did not make.
     */
    private static Map<String, String> environment(String valkeyUrl) {
        Map<String, String> environment = new HashMap<>(ExampleWar.environment(ExampleWar.PATIENT_TIMEOUTS));
        environment.putAll(Map.of(
                "RATELIMIT_VALKEY_URL", valkeyUrl,
                "RATELIMIT_TRUSTED_PROXIES", "127.0.0.1/32",
                "RATELIMIT_RULES", "api,login-user,login-ip,search,tokens,rest,greet,welcome,trial",
                "RATELIMIT_RULE_SEARCH_LOCAL_LEASE", "8",
                "RATELIMIT_RULE_TRIAL_MATCH", "/api/*",
                "RATELIMIT_RULE_TRIAL_ALGORITHM", "fixed-window",
                "RATELIMIT_RULE_TRIAL_LIMIT", "1",
                "RATELIMIT_RULE_TRIAL_WINDOW", "30s",
                "RATELIMIT_RULE_TRIAL_SHADOW", "true"));
        return environment;
    }

    @Test
    void everyPanelHasDataAndTheStoreAlertFiresDuringTheOutageOnly(@TempDir Path dir) throws Exception {
        try (ValkeyServer valkey = ValkeyServer.startProcess(List.of())) {
            Process example = startExample(valkey.url());
            List<String> output = new ArrayList<>();
            try {
                int port = ExampleWar.awaitPort(example, output);
                String base = "http://127.0.0.1:" + port;
                try (Prometheus prometheus = Prometheus.start(dir, config(dir, port))) {
                    run(valkey, base, prometheus);
                }
            } finally {
                example.getOutputStream().close();
                if (!example.waitFor(10, TimeUnit.SECONDS)) {
                    example.destroyForcibly().waitFor();
                }
            }
        }
    }

    private void run(ValkeyServer valkey, String base, Prometheus prometheus) throws Exception {
        Prometheus.await(Duration.ofSeconds(30), "Prometheus scraping the example", () ->
                prometheus.query("up{job=\"" + JOB + "\"} == 1", Instant.now()).isEmpty()
                        ? Optional.empty() : Optional.of(true));
        Instant start = Instant.now();
        try (Load load = new Load(base)) {
            // Before: Valkey answers; every outcome but the failures shows, and Prometheus has
            // evaluated the rules on it.
            awaitSeries(prometheus, "ratelimit_decisions_total{rule=\"api\", outcome=\"rejected\"}");
            awaitSeries(prometheus, "ratelimit_decisions_total{rule=\"search\", outcome=\"rejected\"}");
            awaitSeries(prometheus, "ratelimit_decisions_total{outcome=\"lease_hit\"}");
            awaitSeries(prometheus, "ratelimit_decisions_total{outcome=\"shadow_rejected\"}");
            awaitSeries(prometheus, "ratelimit_near_limit_total");
            awaitEvaluationAfter(prometheus, Instant.now());
            assertThat(alerts(prometheus, STORE_ALERT)).as("the store alert before the outage").isEmpty();

            // The outage: Valkey killed; the example decides by policy and its breaker opens.
            Instant outage = Instant.now();
            valkey.stop();
            long closed503 = load.count(503);
            Prometheus.await(Duration.ofSeconds(60), STORE_ALERT + " firing", () ->
                    alerts(prometheus, STORE_ALERT).contains("firing") ? Optional.of(true) : Optional.empty());
            Prometheus.await(Duration.ofSeconds(30), "the breaker open as Prometheus saw it", () ->
                    prometheus.query("ratelimit_breaker_open == 1", Instant.now()).isEmpty()
                            ? Optional.empty() : Optional.of(true));
            Instant recovery = Instant.now();
            assertThat(load.count(503)).as("login-user is on-failure=closed: 503 while Valkey is down")
                    .isGreaterThan(closed503);
            valkey.start();

            // After: Valkey back, the breaker closes at its next probe.
            Prometheus.await(Duration.ofSeconds(30), "the breaker closed again", () ->
                    prometheus.query("ratelimit_breaker_open == 0", Instant.now()).isEmpty()
                            ? Optional.empty() : Optional.of(true));
            long rejected = load.count(429);
            load.await(Duration.ofSeconds(30), "rejections again after the outage", () -> load.count(429) > rejected + 10);
            Instant end = Instant.now();
            load.close();
            awaitEvaluationAfter(prometheus, end);

            assertStoreAlertOnlyInTheOutage(prometheus, start, outage, recovery);
            Map<String, DashboardPicture.Panel> drawn = assertEveryPanelHasData(prometheus, start, end);
            String picture = System.getProperty("dashboard.png", "");
            if (!picture.isBlank()) {
                DashboardPicture.write(drawn, start, end, new Instant[] {outage, recovery}, Path.of(picture));
            }
        }
    }

    /**
     * The ALERTS series, every sample of it: none before the outage, pending or firing; a firing
     * one between its start and Valkey's return. (Samples over a window at its end rather than a
     * range query, whose steps could fall between them.)
     */
    private static void assertStoreAlertOnlyInTheOutage(Prometheus prometheus, Instant start, Instant outage,
            Instant recovery) {
        String alerts = "ALERTS{alertname=\"" + STORE_ALERT + "\"}";
        assertThat(prometheus.query("max_over_time(" + alerts + "[" + Duration.between(start, outage).toMillis() + "ms])", outage))
                .as("%s pending or firing before the outage", STORE_ALERT).isEmpty();
        String firing = alerts.replace("}", ", alertstate=\"firing\"}");
        assertThat(prometheus.query("max_over_time(" + firing + "[" + Duration.between(outage, recovery).toMillis() + "ms])", recovery))
                .as("%s firing during the outage", STORE_ALERT).isNotEmpty();
    }

    /**
     * Every variable's {@code label_values} has values, and every panel's every query, with the
     * application set to the example's job and the instance and rule to All, returns at least
     * one series with a number in it. Returns what was read, for the picture.
     */
    private static Map<String, DashboardPicture.Panel> assertEveryPanelHasData(Prometheus prometheus, Instant start,
            Instant end) throws Exception {
        Map<String, Object> dashboard = MonitoringFilesTest.dashboard();
        Map<String, String> values = Map.of("application", JOB, "instance", ".*", "rule", ".*");
        for (Map<String, Object> variable : MonitoringFilesTest.list(((Map<?, ?>) dashboard.get("templating")).get("list"))) {
            Matcher labelValues = Pattern.compile("label_values\\((.*), *(\\w+)\\)").matcher((String) variable.get("definition"));
            assertThat(labelValues.matches()).as("variable %s is label_values(selector, label)", variable.get("name")).isTrue();
            List<String> found = prometheus.labelValues(labelValues.group(2), substitute(labelValues.group(1), values, start, end),
                    start, end);
            assertThat(found).as("values of the variable %s", variable.get("name")).isNotEmpty();
            if (variable.get("name").equals("application")) {
                assertThat(found).contains(JOB);
            }
            if (variable.get("name").equals("rule")) {
                assertThat(found).contains("api", "search", "login-user", "trial");
            }
        }
        Map<String, DashboardPicture.Panel> drawn = new java.util.LinkedHashMap<>();
        for (Map<String, Object> panel : MonitoringFilesTest.list(dashboard.get("panels"))) {
            String title = (String) panel.get("title");
            List<DashboardPicture.Series> series = new ArrayList<>();
            for (Map<String, Object> target : MonitoringFilesTest.list(panel.get("targets"))) {
                String query = substitute((String) target.get("expr"), values, start, end);
                String legend = (String) target.getOrDefault("legendFormat", "");
                List<Map<String, Object>> result = Boolean.TRUE.equals(target.get("instant"))
                        ? prometheus.query(query, end)
                        : prometheus.queryRange(query, start, end, Duration.ofSeconds(1));
                List<DashboardPicture.Series> read = DashboardPicture.series(result, legend);
                assertThat(read).as("panel %s, query %s", title, query)
                        .anyMatch(one -> one.points().stream().anyMatch(point -> Double.isFinite(point.value())));
                series.addAll(read);
            }
            drawn.put(title, new DashboardPicture.Panel(title, (String) panel.get("type"), unit(panel), gridPos(panel), series));
        }
        Set<String> outcomes = new TreeSet<>();
        drawn.get("Decisions per second by outcome").series().forEach(one -> outcomes.add(one.name().replaceAll(".* ", "")));
        assertThat(outcomes).as("the outcomes the load made")
                .contains("allowed", "rejected", "shadow_rejected", "fallback", "store_error");
        assertThat(drawn.get("Local leases' hit rate").series()).as("leases on search only")
                .extracting(DashboardPicture.Series::name).containsExactly("search");
        assertThat(drawn.get("Seconds the breaker was open").series().get(0).points().get(0).value())
                .as("seconds the breaker was open").isPositive();
        return drawn;
    }

    /**
     * A query as Grafana sends it: the variables, the rate interval and the range filled in.
     * Grafana's {@code $__rate_interval} is at least four scrape intervals (4 s here); 10 s
     * smooths the load's rounds as a longer one does in production. {@code $__interval}, the
     * panel's step, is the scrape interval here (1 s).
     */
    static String substitute(String expr, Map<String, String> values, Instant start, Instant end) {
        long range = Duration.between(start, end).toSeconds();
        String out = expr.replace("$__rate_interval", "10s").replace("$__range_s", Long.toString(range))
                .replace("$__range", range + "s").replace("$__interval_ms", "1000").replace("$__interval", "1s");
        for (Map.Entry<String, String> value : values.entrySet()) {
            out = out.replace("$" + value.getKey(), value.getValue());
        }
        return out;
    }

    private static String unit(Map<String, Object> panel) {
        Object defaults = ((Map<?, ?>) ((Map<?, ?>) panel.get("fieldConfig")).get("defaults")).get("unit");
        return defaults == null ? "short" : (String) defaults;
    }

    private static int[] gridPos(Map<String, Object> panel) {
        Map<?, ?> pos = (Map<?, ?>) panel.get("gridPos");
        return new int[] {((Number) pos.get("x")).intValue(), ((Number) pos.get("y")).intValue(),
            ((Number) pos.get("w")).intValue(), ((Number) pos.get("h")).intValue()};
    }

    /** The states ({@code pending}, {@code firing}) of an alert now. */
    private static List<String> alerts(Prometheus prometheus, String name) {
        List<String> states = new ArrayList<>();
        for (Map<String, Object> alert : prometheus.alerts()) {
            if (name.equals(((Map<?, ?>) alert.get("labels")).get("alertname"))) {
                states.add((String) alert.get("state"));
            }
        }
        return states;
    }

    private static void awaitSeries(Prometheus prometheus, String selector) {
        Prometheus.await(Duration.ofSeconds(30), selector + " in Prometheus", () ->
                prometheus.query(selector, Instant.now()).isEmpty() ? Optional.empty() : Optional.of(true));
    }

    /** Waits until the rules were evaluated after {@code moment} (a scrape and an evaluation later). */
    @SuppressWarnings("unchecked")
    private static void awaitEvaluationAfter(Prometheus prometheus, Instant moment) {
        Instant after = moment.plusSeconds(2);
        Prometheus.await(Duration.ofSeconds(30), "an evaluation of the rules after " + after, () -> {
            Map<String, Object> rules = (Map<String, Object>) prometheus.api("rules");
            for (Map<String, Object> group : MonitoringFilesTest.list(rules.get("groups"))) {
                String last = (String) group.get("lastEvaluation");
                if (last != null && Instant.parse(last).isAfter(after)) {
                    return Optional.of(true);
                }
            }
            return Optional.empty();
        });
    }

    private static Process startExample(String valkeyUrl) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), ExampleWar.class.getName(), ExampleWar.war().toString());
        builder.redirectErrorStream(true);
        builder.environment().keySet().removeIf(name -> name.startsWith("RATELIMIT_"));
        builder.environment().putAll(environment(valkeyUrl));
        return builder.start();
    }

    /** Prometheus's configuration: every second, the example's /metrics, the rules with short {@code for:}. */
    private static String config(Path dir, int port) throws Exception {
        String rules = new String(MonitoringFilesTest.resource(MonitoringFilesTest.ALERTS), StandardCharsets.UTF_8);
        String shortened = rules.replaceAll("(?m)^(\\s+for:) \\S+$", "$1 " + FOR);
        assertThat(shortened).as("the rules have for: durations to shorten").isNotEqualTo(rules);
        Files.writeString(dir.resolve("alerts.yml"), shortened);
        return """
                global:
                  scrape_interval: 1s
                  scrape_timeout: 1s
                  evaluation_interval: 1s
                rule_files:
                  - alerts.yml
                scrape_configs:
                  - job_name: %s
                    metrics_path: /metrics
                    static_configs:
                      - targets: ['127.0.0.1:%d']
                """.formatted(JOB, port);
    }

    /**
     * The scripted load, one thread, a round every 100 ms: {@code /api/hello} from 30 client
     * addresses in turn (each one every 1.5 s, four times the rule's rate: once its burst of 5
     * is spent, three in four refused; the shadow rule's 1 per 30 s exceeded), {@code /search}
     * three times at once from one of 10 addresses (leases serve repeats within 100 ms; six
     * times the rule's rate), and a failed login every fifth round for one of 7 users (each
     * refused after 5).
     */
    private static final class Load implements AutoCloseable {
        private final String base;
        private final Map<Integer, AtomicLong> statuses = new ConcurrentHashMap<>();
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final Thread thread;

        Load(String base) {
            this.base = base;
            this.thread = new Thread(this::loop, "dashboard-load");
            thread.setDaemon(true);
            thread.start();
        }

        private void loop() {
            long round = 0;
            long next = System.nanoTime();
            // Bounded: stops by itself after five minutes, whatever the test does.
            long stop = next + TimeUnit.MINUTES.toNanos(5);
            while (running.get() && System.nanoTime() < stop) {
                round++;
                try {
                    send(get("/api/hello", "203.0.113." + (round % 15)));
                    send(get("/api/hello", "198.51.100." + (round % 15)));
                    String searcher = "192.0.2." + (round % 10);
                    for (int i = 0; i < 3; i++) {
                        send(get("/search?q=valkey", searcher));
                    }
                    if (round % 5 == 0) {
                        send(HttpRequest.newBuilder(URI.create(base + "/login")).timeout(Duration.ofSeconds(10))
                                .header("Content-Type", "application/x-www-form-urlencoded")
                                .header("X-Forwarded-For", "203.0.113." + (round % 60))
                                .POST(HttpRequest.BodyPublishers.ofString("username=user" + (round % 7))).build());
                    }
                } catch (Exception e) {
                    statuses.computeIfAbsent(-1, k -> new AtomicLong()).incrementAndGet();
                }
                // Pacing of the load, not a wait for a condition.
                next += TimeUnit.MILLISECONDS.toNanos(100);
                long sleep = next - System.nanoTime();
                if (sleep > 0) {
                    Pauses.sleep(TimeUnit.NANOSECONDS.toMillis(sleep));
                }
            }
        }

        private HttpRequest get(String path, String client) {
            return HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(10))
                    .header("X-Forwarded-For", client).build();
        }

        private void send(HttpRequest request) throws Exception {
            int status = JettyApp.HTTP.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
            statuses.computeIfAbsent(status, k -> new AtomicLong()).incrementAndGet();
        }

        long count(int status) {
            AtomicLong count = statuses.get(status);
            return count == null ? 0 : count.get();
        }

        void await(Duration timeout, String what, java.util.function.BooleanSupplier condition) {
            Prometheus.await(timeout, what + " (statuses so far " + statuses + ")",
                    () -> condition.getAsBoolean() ? Optional.of(true) : Optional.empty());
        }

        @Override
        public void close() throws InterruptedException {
            running.set(false);
            thread.join(15_000);
        }
    }
}
