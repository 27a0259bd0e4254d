package dev.ratelimit.it;

import dev.ratelimit.it.checker.JsonReader;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A real Prometheus server in a process of its own, and its {@code promtool}: Debian's
 * {@code prometheus} package (.ci/run installs it). A missing binary fails the test, saying how
 * to install it: these tests never skip.
 */
final class Prometheus implements AutoCloseable {

    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);

    private final Process process;
    private final Path log;
    private final String url;

    private Prometheus(Process process, Path log, String url) {
        this.process = process;
        this.log = log;
        this.url = url;
    }

    /**
     * A binary of the {@code prometheus} package on {@code PATH}.
     *
     * @param name {@code prometheus} or {@code promtool}
     * @return its path
     * @throws IllegalStateException with how to install it, when it is not there
     */
    static Path binary(String name) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path candidate = Path.of(dir, name);
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        throw new IllegalStateException(name + " is not on PATH: install Prometheus (Debian: 'apt-get install "
                + "prometheus', then stop the service it may start); .ci/run does so");
    }

    /**
     * Runs {@code promtool} with arguments in a directory.
     *
     * @return its exit status and everything it printed
     */
    static ToolRun promtool(Path dir, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(binary("promtool").toString()));
        command.addAll(List.of(args));
        Path out = Files.createTempFile(dir, "promtool", ".txt");
        Process run = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(out.toFile()).start();
        if (!run.waitFor(60, TimeUnit.SECONDS)) {
            run.destroyForcibly();
            throw new IllegalStateException("promtool " + String.join(" ", args) + " did not end within 60 s");
        }
        return new ToolRun(run.exitValue(), Files.readString(out));
    }

    /** What a {@code promtool} run printed and its exit status. */
    record ToolRun(int status, String output) {
    }

    /**
     * Starts Prometheus on a free loopback port with a configuration, its data in {@code dir},
     * and waits until it is ready.
     *
     * @param dir    a directory of its own: the configuration's relative paths (rule files) are
     *               resolved against it
     * @param config the text of {@code prometheus.yml}
     * @return the running server
     */
    static Prometheus start(Path dir, String config) throws IOException {
        Path configFile = dir.resolve("prometheus.yml");
        Files.writeString(configFile, config);
        int port = ValkeyServer.freePort();
        Path log = dir.resolve("prometheus.log");
        Process process = new ProcessBuilder(binary("prometheus").toString(),
                "--config.file=" + configFile,
                "--storage.tsdb.path=" + dir.resolve("data"),
                "--web.listen-address=127.0.0.1:" + port)
                .directory(dir.toFile()).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        Prometheus prometheus = new Prometheus(process, log, "http://127.0.0.1:" + port);
        try {
            prometheus.awaitReady();
        } catch (RuntimeException e) {
            prometheus.close();
            throw e;
        }
        return prometheus;
    }

    private void awaitReady() {
        await(START_TIMEOUT, "Prometheus ready at " + url, () -> {
            if (!process.isAlive()) {
                throw new IllegalStateException("Prometheus exited with " + process.exitValue() + ":\n" + log());
            }
            try {
                HttpResponse<String> ready = JettyApp.HTTP.send(HttpRequest.newBuilder(URI.create(url + "/-/ready"))
                        .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
                return ready.statusCode() == 200 ? Optional.of(true) : Optional.empty();
            } catch (IOException e) {
                return Optional.empty();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        });
    }

    /**
     * Polls {@code poll} every 100 ms until it answers, at most {@code timeout}.
     *
     * @param what what is waited for, for the failure message
     * @return its answer
     * @throws AssertionError when the deadline passes first
     */
    static <T> T await(Duration timeout, String what, Supplier<Optional<T>> poll) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Optional<T> answer = poll.get();
            if (answer.isPresent()) {
                return answer.get();
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("waited " + timeout.toSeconds() + " s for " + what);
            }
            Pauses.sleep(100);
        }
    }

    /** The server's base URL. */
    String url() {
        return url;
    }

    /** The last 4,000 characters of what the server logged, for failure messages. */
    String log() {
        try {
            String text = Files.readString(log);
            return text.length() > 4000 ? text.substring(text.length() - 4000) : text;
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    /**
     * {@code GET /api/v1/<path>}, the answer's {@code data}.
     *
     * @param path       e.g. {@code query_range}
     * @param parameters name and value, alternately
     * @throws AssertionError when Prometheus answers with an error (a query it cannot parse)
     */
    Object api(String path, String... parameters) {
        StringJoiner query = new StringJoiner("&");
        for (int i = 0; i < parameters.length; i += 2) {
            query.add(parameters[i] + "=" + URLEncoder.encode(parameters[i + 1], StandardCharsets.UTF_8));
        }
        try {
            HttpResponse<String> response = JettyApp.HTTP.send(HttpRequest.newBuilder(
                    URI.create(url + "/api/v1/" + path + "?" + query)).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString());
            Map<String, Object> answer = JsonReader.object(response.body());
            if (response.statusCode() != 200 || !"success".equals(answer.get("status"))) {
                throw new AssertionError("Prometheus answered " + response.statusCode() + " to " + path + " "
                        + String.join(" ", parameters) + ": " + response.body());
            }
            return answer.get("data");
        } catch (IOException e) {
            throw new IllegalStateException("Prometheus at " + url + " did not answer: " + e.getMessage() + "\n" + log(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * A range query's series: each with {@code metric} (its labels) and {@code values} (pairs of
     * time and value as text).
     */
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> queryRange(String promql, Instant start, Instant end, Duration step) {
        Map<String, Object> data = (Map<String, Object>) api("query_range", "query", promql,
                "start", seconds(start), "end", seconds(end), "step", Double.toString(step.toMillis() / 1000.0));
        return (List<Map<String, Object>>) data.get("result");
    }

    /** An instant query's vector: each element with {@code metric} and {@code value}. */
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> query(String promql, Instant at) {
        Map<String, Object> data = (Map<String, Object>) api("query", "query", promql, "time", seconds(at));
        if (!"vector".equals(data.get("resultType"))) {
            throw new AssertionError(promql + " is not a vector: " + data);
        }
        return (List<Map<String, Object>>) data.get("result");
    }

    /** The values of a label among the series a selector matches over a time range. */
    @SuppressWarnings("unchecked")
    List<String> labelValues(String label, String selector, Instant start, Instant end) {
        return (List<String>) api("label/" + label + "/values", "match[]", selector, "start", seconds(start),
                "end", seconds(end));
    }

    /** The alerts pending or firing now, each with {@code labels} and {@code state}. */
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> alerts() {
        return (List<Map<String, Object>>) ((Map<String, Object>) api("alerts")).get("alerts");
    }

    private static String seconds(Instant at) {
        return String.format(java.util.Locale.ROOT, "%d.%03d", at.getEpochSecond(), at.getNano() / 1_000_000);
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
