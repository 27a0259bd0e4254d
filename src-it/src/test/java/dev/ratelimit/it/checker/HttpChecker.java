package dev.ratelimit.it.checker;

import dev.ratelimit.it.ValkeyServer;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One run of the checker over HTTP: a seed's {@link HttpWorkload} through the filter on Jetty
 * ({@link HttpApps}, started once and reused), its history recorded and checked by the same
 * {@link Invariants} as the API targets (plus {@link HttpChecks}). A run that breaks nothing
 * deletes its history; one that does keeps it and reports the first violation.
 */
final class HttpChecker {

    private HttpChecker() {
    }

    /**
     * What a run did and found.
     *
     * @param workload   what ran
     * @param violations what broke, in order
     * @param file       the history (deleted when nothing broke)
     * @param excerpt    the events that show the first violation
     * @param stats      counts of what happened
     * @param millis     real time taken
     */
    record Result(HttpWorkload workload, List<Violation> violations, Path file, List<String> excerpt,
                  Map<String, Integer> stats, long millis) {

        boolean passed() {
            return violations.isEmpty();
        }

        String summary() {
            return "seed " + workload.seed() + " HTTP (deny cache " + (workload.denyCache() ? "on" : "off")
                    + ", pipelines " + (workload.pipelines() ? "on" : "off") + ", from "
                    + java.time.Instant.ofEpochMilli(workload.clockStart()) + "): " + stats + " in " + millis + " ms";
        }

        String report() {
            StringBuilder out = new StringBuilder("seed " + workload.seed() + " over HTTP: " + violations.size()
                    + " violation(s); the first:\n  " + violations.get(0) + "\nThe events of that rule and key:\n");
            excerpt.forEach(line -> out.append("  ").append(line).append('\n'));
            violations.stream().skip(1).limit(20).forEach(v -> out.append("  op ").append(v.op()).append(' ')
                    .append(v.rule()).append('/').append(v.key()).append(' ').append(v.invariant()).append('\n'));
            return out.append("Whole history kept in ").append(file.toAbsolutePath()).append("\nRerun: -Dtest=")
                    .append("HttpCheckerTest -Dchecker.seed=").append(workload.seed()).toString();
        }
    }

    /**
     * Runs a seed.
     *
     * @param seed    the seed
     * @param steps   how many steps
     * @param apps    the running apps
     * @param valkey  their Valkey, emptied first
     * @param avoided the open defects to steer clear of
     * @return the result
     */
    static Result run(long seed, int steps, HttpApps apps, ValkeyServer valkey, Set<Known> avoided) {
        HttpWorkload workload = HttpWorkload.generate(seed, steps, avoided);
        valkey.flushAll();
        long began = System.nanoTime();
        History history = new History(Checker.HISTORIES, seed + "-http");
        try {
            new HttpRunner(workload, apps.app(workload.pipelines(), seed), history).run();
            List<Event> events = history.events();
            List<Violation> violations = Invariants.check(events);
            Map<String, Integer> stats = new java.util.LinkedHashMap<>(Checker.stats(events));
            // The calls of annotated methods (REST or CDI) the method itself decided (not refused by the filter first).
            events.stream().filter(e -> e instanceof Event.Response r && r.how().startsWith("method ")
                    && !r.how().contains("refused by the filter")).forEach(e -> stats.merge(
                            (((Event.Response) e).how().startsWith("method cdi ") ? "cdi" : "method")
                                    + (((Event.Response) e).status() == 429 ? "429" : "Ran"), 1, Integer::sum));
            long millis = (System.nanoTime() - began) / 1_000_000;
            if (violations.isEmpty()) {
                history.discard();
                return new Result(workload, violations, history.file(), List.of(), stats, millis);
            }
            history.close();
            return new Result(workload, violations, history.file(),
                    history.excerpt(Checker.shows(events, violations.get(0)), Checker.EXCERPT_LINES),
                    stats, millis);
        } catch (RuntimeException | Error e) {
            history.close();
            throw new AssertionError("seed " + seed + " over HTTP could not run; history kept in "
                    + history.file().toAbsolutePath(), e);
        }
    }

    /**
     * The apps runs share: one with pipelined calls to Valkey, one without, each started on its
     * first use and kept until closed (a test class's lifetime), or until a seed it ran runs again.
     */
    static final class HttpApps implements AutoCloseable {
        private final ValkeyServer valkey;
        private final Map<Boolean, HttpApp> apps = new HashMap<>();
        /** The seeds each app has run. */
        private final Map<Boolean, java.util.Set<Long>> ran = new HashMap<>();

        HttpApps(ValkeyServer valkey) {
            this.valkey = valkey;
        }

        /**
         * The app with pipelines on or off, for a seed: a new one if it ran that seed before, since
         * a run begins at its seed's date with its seed's keys, and the deny cache, the provider's
         * cache and its answers of the run before would meet it (a seed reruns as it ran first).
         */
        HttpApp app(boolean pipelines, long seed) {
            if (!ran.computeIfAbsent(pipelines, p -> new java.util.HashSet<>()).add(seed)) {
                try (HttpApp used = apps.remove(pipelines)) {
                    // closed: a fresh app below
                } catch (Exception e) {
                    throw new IllegalStateException("the checker's app (pipelines " + pipelines + ") did not stop", e);
                }
                ran.get(pipelines).clear();
                ran.get(pipelines).add(seed);
            }
            return apps.computeIfAbsent(pipelines, p -> {
                try {
                    return HttpApp.start(settings(p));
                } catch (Exception e) {
                    throw new IllegalStateException("the checker's app (pipelines " + p + ") did not start", e);
                }
            });
        }

        /**
         * What every run shares: the app's clock as the limiter's (a run's date at the wall clock's pace), generous
         * timeouts (a busy machine must not turn a decision into a policy's), a refresh every 100 ms;
         * every property name a run sets (see {@link HttpSettings#of}; its trusted proxies include 127.0.0.1).
         */
        private Map<String, String> settings(boolean pipelines) {
            Map<String, String> m = new HashMap<>();
            m.put("ratelimit.valkey.url", valkey.url());
            m.put("ratelimit.valkey.timeout", "2s");
            m.put("ratelimit.valkey.connect-timeout", "2s");
            m.put("ratelimit.valkey.pool.max-wait", "2s");
            m.put("ratelimit.valkey.pipelines", pipelines ? "8" : "0");
            m.put("ratelimit.key-prefix", "ck:http:" + (pipelines ? "p" : "n"));
            m.put("ratelimit.clock", "client");
            m.put("ratelimit.refresh", "100ms");
            m.put("ratelimit.limit-provider.timeout", "2s");
            m.putAll(HttpSettings.of(List.of(), List.of(), true, new HttpForwarding.Network("X-Forwarded-For", 64, 0), 1001));
            return m;
        }

        @Override
        public void close() throws Exception {
            for (HttpApp app : apps.values()) {
                app.close();
            }
            apps.clear();
        }
    }
}
