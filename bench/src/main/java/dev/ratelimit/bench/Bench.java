package dev.ratelimit.bench;

import dev.ratelimit.Algorithm;
import dev.ratelimit.it.ValkeyServer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Ours against Bucket4j on one Valkey, in one run. Timings on shared machines are noisy, so the
 * report gives ratios measured back to back, not absolute numbers to compare across runs.
 *
 * <ul>
 *   <li>throughput on one hot key and on many keys, 8 threads, every request allowed;</li>
 *   <li>exactness under contention: 8 threads ask 4 × the limit of one key at once, how many
 *       get through (the limit is the right answer).</li>
 * </ul>
 *
 * <p>Run: {@code ./mvnw -q -pl bench -am -Prun-bench -DskipTests verify}; {@code BENCH_OPS}
 * sets the decisions per measurement (default 20000).
 */
public final class Bench {

    private Bench() {
    }

    /** One measured scenario. */
    record Result(String scenario, String contender, double opsPerSecond, int allowed) {
    }

    /**
     * Runs the benchmark and prints the report.
     *
     * @param args unused
     * @throws Exception when Valkey cannot be had
     */
    public static void main(String[] args) throws Exception {
        int ops = Integer.parseInt(System.getenv().getOrDefault("BENCH_OPS", "20000"));
        try (ValkeyServer valkey = ValkeyServer.provide()) {
            List<Result> results = run(valkey, ops, 8);
            print(results, ops);
            valkey.flushAll();
            ServerCost.print(ServerCost.measure(valkey.url(), ops), ops);
            valkey.flushAll();
            ClientCost.measureAndPrint(valkey.url(), ops);
        }
    }

    static List<Result> run(ValkeyServer valkey, int ops, int threads) throws InterruptedException {
        List<Result> results = new ArrayList<>();
        List<Function<String, Contender>> contenders = List.of(
                url -> new OurLimiter(url, Algorithm.TOKEN_BUCKET, 100_000_000L, Duration.ofHours(1)),
                url -> new OurLimiter(url, Algorithm.GCRA, 100_000_000L, Duration.ofHours(1)),
                url -> new Bucket4jLimiter(url, 100_000_000L, Duration.ofHours(1)));
        for (Function<String, Contender> make : contenders) {
            valkey.flushAll();
            try (Contender contender = make.apply(valkey.url())) {
                measure(contender, "warm-up", ops / 4, threads, i -> "warm");
                results.add(measure(contender, "hot key", ops, threads, i -> "hot"));
                results.add(measure(contender, "10k keys", ops, threads, i -> "k" + (i % 10_000)));
            }
        }
        List<Function<String, Contender>> exact = List.of(
                url -> new OurLimiter(url, Algorithm.TOKEN_BUCKET, 100, Duration.ofHours(1)),
                url -> new OurLimiter(url, Algorithm.SLIDING_LOG, 100, Duration.ofHours(1)),
                url -> new Bucket4jLimiter(url, 100, Duration.ofHours(1)));
        for (Function<String, Contender> make : exact) {
            valkey.flushAll();
            try (Contender contender = make.apply(valkey.url())) {
                results.add(measure(contender, "4x limit 100, one key", 400, threads, i -> "contended"));
            }
        }
        return results;
    }

    private static Result measure(Contender contender, String scenario, int ops, int threads,
                                  java.util.function.IntFunction<String> key) throws InterruptedException {
        AtomicInteger next = new AtomicInteger();
        AtomicInteger allowed = new AtomicInteger();
        List<Thread> workers = new ArrayList<>();
        long start = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            Thread worker = new Thread(() -> {
                for (int i = next.getAndIncrement(); i < ops; i = next.getAndIncrement()) {
                    if (contender.tryAcquire(key.apply(i))) {
                        allowed.incrementAndGet();
                    }
                }
            });
            worker.start();
            workers.add(worker);
        }
        for (Thread worker : workers) {
            worker.join();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        return new Result(scenario, contender.name(), ops / seconds, allowed.get());
    }

    private static void print(List<Result> results, int ops) {
        System.out.printf(Locale.ROOT, "%nBenchmark: %d decisions per measurement, 8 threads, one valkey-server on loopback%n", ops);
        System.out.printf(Locale.ROOT, "%-24s %-30s %12s %10s %8s%n", "scenario", "limiter", "decisions/s", "vs b4j", "allowed");
        for (Result r : results) {
            double anchor = results.stream()
                    .filter(a -> a.scenario().equals(r.scenario()) && a.contender().startsWith("bucket4j"))
                    .mapToDouble(Result::opsPerSecond).findFirst().orElse(Double.NaN);
            System.out.printf(Locale.ROOT, "%-24s %-30s %12.0f %9.2fx %8d%n", r.scenario(), r.contender(),
                    r.opsPerSecond(), r.opsPerSecond() / anchor, r.allowed());
        }
    }
}
