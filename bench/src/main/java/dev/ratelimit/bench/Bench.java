package dev.ratelimit.bench;

import dev.ratelimit.Algorithm;
import dev.ratelimit.it.ValkeyServer;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.function.ToDoubleFunction;

/**
 * Ours against Bucket4j and a bare Jedis client on one Valkey, in one run. Timings on shared
 * machines are noisy, so the report gives ratios measured back to back, not absolute numbers
 * to compare across runs.
 *
 * <ul>
 *   <li>throughput, p50 and p99 latency and the JVM's CPU per decision, on one hot key and on
 *       100,000 random keys, at 1, 8 and 32 threads, every request allowed;</li>
 *   <li>what local leases admit at the limit: 8 threads hammer one key of a token bucket for
 *       two seconds, with leases and without, and the units each admitted against the bucket's
 *       own bound;</li>
 *   <li>the five algorithms, and one rule against three in one call;</li>
 *   <li>{@code valkey-benchmark} calling our function at the same concurrency, with and
 *       without {@code -P 16};</li>
 *   <li>exactness under contention: 8 threads ask 4 × the limit of one key at once, how many
 *       get through (the limit is the right answer);</li>
 *   <li>the Valkey CPU per decision ({@link ServerCost}) and the calling thread's
 *       ({@link ClientCost}).</li>
 * </ul>
 *
 * <p>Run: {@code ./mvnw -q -pl bench -am -Prun-bench -DskipTests verify}; {@code BENCH_OPS}
 * sets the decisions per measurement (default 20000), {@code BENCH_PIPELINES} the pipelines of
 * the pipelined limiters (default the limiter's), {@code BENCH_LEASE} the local leases' size
 * (default 64), {@code BENCH_ONLY=server} measures only the
 * Valkey CPU per decision, {@code BENCH_ONLY=rules} only one rule against three (part three),
 * {@code BENCH_ONLY=throughput} only the throughput (part one), at the
 * thread counts of {@code BENCH_THREADS} (default {@code 1,8,32}), after {@code BENCH_WARMUP}
 * decisions of every contender (default twice {@code BENCH_OPS}); {@code BENCH_ROUNDS} (here default 1)
 * measures the throughput that many times, every contender in turn, and reports each figure's
 * median.
 */
public final class Bench {

    static final long UNREACHED = 100_000_000L;
    static final Duration HOUR = Duration.ofHours(1);
    static final int RANDOM_KEYS = 100_000;
    /** The pipelines of the limiter's earlier default, measured beside the default's. */
    static final int WIDE_PIPELINES = 8;

    private Bench() {
    }

    /**
     * One measured scenario.
     *
     * @param cpuMicros the JVM's CPU time (all threads) per decision
     */
    record Result(String scenario, String contender, int threads, double opsPerSecond, int allowed,
                  double p50Micros, double p99Micros, double cpuMicros) {
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
            if ("server".equals(System.getenv("BENCH_ONLY"))) {
                ServerCost.print(ServerCost.measure(valkey.url(), ops), ops);
                return;
            }
            if ("rules".equals(System.getenv("BENCH_ONLY"))) {
                print("One rule against three in one call (token-bucket, gcra, fixed-window), 100k random keys",
                        rules(valkey, ops, List.of(1, 8)));
                return;
            }
            List<Integer> threadCounts = Arrays.stream(System.getenv().getOrDefault("BENCH_THREADS", "1,8,32")
                    .split(",")).map(String::trim).map(Integer::valueOf).toList();
            List<Result> results = throughput(valkey, ops, threadCounts);
            print("Throughput, every request allowed", results);
            printAdmitted(admitted(valkey, 8, 2_000));
            if ("throughput".equals(System.getenv("BENCH_ONLY"))) {
                return;
            }
            print("Every algorithm, 100k random keys, 8 threads", algorithms(valkey, ops, 8));
            print("One rule against three in one call (token-bucket, gcra, fixed-window), 100k random keys",
                    rules(valkey, ops, List.of(1, 8)));
            ValkeyBenchmark.print(ValkeyBenchmark.compare(valkey, ops, List.of(8, 32), results));
            print("Exactness: 4x a limit of 100 on one key, 8 threads at once", exactness(valkey, 8));
            valkey.flushAll();
            ServerCost.print(ServerCost.measure(valkey.url(), ops), ops);
            valkey.flushAll();
            ClientCost.measureAndPrint(valkey.url(), ops);
        }
    }

    /**
     * Ours pipelined (the default, and {@link #WIDE_PIPELINES}), unpipelined and with local
     * leases, a bare Jedis client and Bucket4j, on a hot key and on random keys.
     */
    static List<Result> throughput(ValkeyServer valkey, int ops, List<Integer> threadCounts) throws InterruptedException {
        List<Function<String, Contender>> contenders = List.of(
                url -> new OurLimiter(url, Algorithm.TOKEN_BUCKET, UNREACHED, HOUR),
                url -> new OurLimiter(url, List.of(Algorithm.TOKEN_BUCKET), UNREACHED, HOUR, WIDE_PIPELINES),
                url -> new OurLimiter(url, List.of(Algorithm.TOKEN_BUCKET), UNREACHED, HOUR, 0),
                url -> new OurLimiter(url, List.of(Algorithm.TOKEN_BUCKET), UNREACHED, HOUR, OurLimiter.PIPELINES,
                        Long.parseLong(System.getenv().getOrDefault("BENCH_LEASE", "64"))),
                url -> new BareJedis(url, UNREACHED, HOUR),
                url -> new Bucket4jLimiter(url, UNREACHED, HOUR));
        warmUp(valkey, contenders, ops, threadCounts.stream().mapToInt(Integer::intValue).max().orElse(1));
        int rounds = Integer.parseInt(System.getenv().getOrDefault("BENCH_ROUNDS", "1"));
        ServerReads reads = new ServerReads();
        List<Result> results = new ArrayList<>();
        for (int threads : threadCounts) {
            List<Result> ofThreads = new ArrayList<>();
            // Each round measures every contender in turn, so a neighbour's load falls on all of them.
            for (int round = 0; round < rounds; round++) {
                for (Function<String, Contender> make : contenders) {
                    valkey.flushAll();
                    try (Contender contender = make.apply(valkey.url())) {
                        measure(contender, "warm-up", ops / 4, threads, i -> "warm" + (i % 1000));
                        ofThreads.add(measure(contender, "one hot key", ops, threads, i -> "hot"));
                        long readsBefore = ServerReads.now(valkey);
                        ofThreads.add(measure(contender, "100k random keys", ops, threads, Bench::randomKey));
                        reads.add(contender.name(), threads, ServerReads.now(valkey) - readsBefore, ops);
                    }
                }
            }
            results.addAll(medians(ofThreads));
        }
        reads.print("100k random keys");
        return results;
    }

    /** Per scenario and contender, in the order first measured, the median of each figure over the rounds. */
    static List<Result> medians(List<Result> measured) {
        Map<String, List<Result>> rounds = new LinkedHashMap<>();
        for (Result r : measured) {
            rounds.computeIfAbsent(r.scenario() + "|" + r.contender(), k -> new ArrayList<>()).add(r);
        }
        List<Result> medians = new ArrayList<>();
        for (List<Result> of : rounds.values()) {
            Result first = of.get(0);
            medians.add(new Result(first.scenario(), first.contender(), first.threads(), median(of, Result::opsPerSecond),
                    first.allowed(), median(of, Result::p50Micros), median(of, Result::p99Micros),
                    median(of, Result::cpuMicros)));
        }
        return medians;
    }

    private static double median(List<Result> results, ToDoubleFunction<Result> figure) {
        double[] values = results.stream().mapToDouble(figure).sorted().toArray();
        return values[values.length / 2];
    }

    /**
     * Every contender runs {@code BENCH_WARMUP} decisions (default twice {@code ops}) on random keys
     * before any is measured: the JIT compiles the code each runs (the limiter's more than the
     * bare client's) while the first measured would otherwise run, and the process CPU counted
     * per decision includes the compiler threads'.
     */
    private static void warmUp(ValkeyServer valkey, List<Function<String, Contender>> contenders, int ops, int threads)
            throws InterruptedException {
        int warmOps = Integer.parseInt(System.getenv().getOrDefault("BENCH_WARMUP", Integer.toString(2 * ops)));
        for (Function<String, Contender> make : contenders) {
            valkey.flushAll();
            try (Contender contender = make.apply(valkey.url())) {
                measure(contender, "warm-up", warmOps, threads, Bench::randomKey);
            }
        }
    }

    static List<Result> algorithms(ValkeyServer valkey, int ops, int threads) throws InterruptedException {
        List<Result> results = new ArrayList<>();
        for (Algorithm algorithm : Algorithm.values()) {
            long limit = algorithm == Algorithm.SLIDING_LOG || algorithm.isConcurrency() ? 10_000 : UNREACHED;
            valkey.flushAll();
            try (Contender contender = new OurLimiter(valkey.url(), algorithm, limit, HOUR)) {
                measure(contender, "warm-up", ops / 4, threads, i -> "warm" + (i % 1000));
                results.add(measure(contender, "100k random keys", ops, threads, Bench::randomKey));
            }
        }
        valkey.flushAll();
        try (Contender contender = new Bucket4jLimiter(valkey.url(), UNREACHED, HOUR)) {
            measure(contender, "warm-up", ops / 4, threads, i -> "warm" + (i % 1000));
            results.add(measure(contender, "100k random keys", ops, threads, Bench::randomKey));
        }
        return results;
    }

    static List<Result> rules(ValkeyServer valkey, int ops, List<Integer> threadCounts) throws InterruptedException {
        List<Result> results = new ArrayList<>();
        for (int threads : threadCounts) {
            for (List<Algorithm> algorithms : List.of(List.of(Algorithm.TOKEN_BUCKET),
                    List.of(Algorithm.TOKEN_BUCKET, Algorithm.GCRA, Algorithm.FIXED_WINDOW))) {
                valkey.flushAll();
                try (Contender contender = new OurLimiter(valkey.url(), algorithms, UNREACHED, HOUR, OurLimiter.PIPELINES)) {
                    measure(contender, "warm-up", ops / 4, threads, i -> "warm" + (i % 1000));
                    results.add(measure(contender, "100k random keys", ops, threads, Bench::randomKey));
                }
            }
        }
        return results;
    }

    /**
     * Units admitted on one key at its limit, and the bound: {@code burst + limit × elapsed / window}.
     *
     * @param decisions decisions made, allowed or not
     */
    record Admitted(String contender, long admitted, long bound, long decisions, double seconds) {
    }

    /**
     * A token bucket of 1,000 a second (burst 1,000) hammered on one key by {@code threads} threads
     * for {@code millis}, with local leases of {@code BENCH_LEASE} units for 50 ms and without:
     * leases must not cost admissions (see the README's *Local leases*).
     */
    static List<Admitted> admitted(ValkeyServer valkey, int threads, long millis) throws InterruptedException {
        long lease = Long.parseLong(System.getenv().getOrDefault("BENCH_LEASE", "64"));
        List<Admitted> results = new ArrayList<>();
        for (long leaseSize : new long[] {0, lease}) {
            valkey.flushAll();
            try (Contender contender = new OurLimiter(valkey.url(), List.of(Algorithm.TOKEN_BUCKET), 1_000,
                    Duration.ofSeconds(1), OurLimiter.PIPELINES, leaseSize)) {
                AtomicInteger allowed = new AtomicInteger();
                AtomicInteger decided = new AtomicInteger();
                long start = System.nanoTime();
                long until = start + millis * 1_000_000L;
                List<Thread> workers = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    Thread worker = new Thread(() -> {
                        while (System.nanoTime() < until) {
                            if (contender.tryAcquire("at-limit")) {
                                allowed.incrementAndGet();
                            }
                            decided.incrementAndGet();
                        }
                    });
                    worker.start();
                    workers.add(worker);
                }
                for (Thread worker : workers) {
                    worker.join();
                }
                long elapsedMillis = (System.nanoTime() - start) / 1_000_000L;
                results.add(new Admitted(contender.name(), allowed.get(), 1_000 + elapsedMillis, decided.get(),
                        elapsedMillis / 1000.0));
            }
        }
        return results;
    }

    static void printAdmitted(List<Admitted> results) {
        System.out.printf(Locale.ROOT, "%nAdmitted at the limit: one key, token bucket 1000/s burst 1000, 8 threads, 2 s%n");
        System.out.printf(Locale.ROOT, "%-40s %9s %9s %11s %11s %9s%n", "limiter", "admitted", "bound", "decisions/s",
                "vs without", "admitted ÷ without");
        Admitted without = results.get(0);
        for (Admitted r : results) {
            System.out.printf(Locale.ROOT, "%-40s %9d %9d %11.0f %10.2fx %9.3f%n", r.contender(), r.admitted(), r.bound(),
                    r.decisions() / r.seconds(), (r.decisions() / r.seconds()) / (without.decisions() / without.seconds()),
                    (double) r.admitted() / without.admitted());
        }
    }

    static List<Result> exactness(ValkeyServer valkey, int threads) throws InterruptedException {
        List<Function<String, Contender>> exact = List.of(
                url -> new OurLimiter(url, Algorithm.TOKEN_BUCKET, 100, HOUR),
                url -> new OurLimiter(url, Algorithm.SLIDING_LOG, 100, HOUR),
                url -> new OurLimiter(url, List.of(Algorithm.TOKEN_BUCKET), 100, HOUR, 0),
                url -> new Bucket4jLimiter(url, 100, HOUR));
        List<Result> results = new ArrayList<>();
        for (Function<String, Contender> make : exact) {
            valkey.flushAll();
            try (Contender contender = make.apply(valkey.url())) {
                results.add(measure(contender, "4x limit 100, one key", 400, threads, i -> "contended"));
            }
        }
        return results;
    }

    private static String randomKey(int i) {
        return "r" + ThreadLocalRandom.current().nextInt(RANDOM_KEYS);
    }

    static Result measure(Contender contender, String scenario, int ops, int threads, IntFunction<String> key)
            throws InterruptedException {
        AtomicInteger next = new AtomicInteger();
        AtomicInteger allowed = new AtomicInteger();
        long[] latencies = new long[ops];
        List<Thread> workers = new ArrayList<>();
        long cpuBefore = processCpuNanos();
        long start = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            Thread worker = new Thread(() -> {
                for (int i = next.getAndIncrement(); i < ops; i = next.getAndIncrement()) {
                    String k = key.apply(i);
                    long began = System.nanoTime();
                    boolean ok = contender.tryAcquire(k);
                    latencies[i] = System.nanoTime() - began;
                    if (ok) {
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
        double cpu = (processCpuNanos() - cpuBefore) / 1000.0 / ops;
        Arrays.sort(latencies);
        return new Result(scenario, contender.name(), threads, ops / seconds, allowed.get(),
                latencies[(int) (ops * 0.50)] / 1000.0, latencies[Math.min(ops - 1, (int) (ops * 0.99))] / 1000.0, cpu);
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    static void print(String title, List<Result> results) {
        System.out.printf(Locale.ROOT, "%n%s%n", title);
        System.out.printf(Locale.ROOT, "%-20s %3s %-32s %11s %8s %8s %8s %8s %8s %7s%n", "scenario", "thr", "limiter",
                "decisions/s", "vs b4j", "vs bare", "p50 us", "p99 us", "cpu us", "allowed");
        for (Result r : results) {
            System.out.printf(Locale.ROOT, "%-20s %3d %-32s %11.0f %7.2fx %7.2fx %8.0f %8.0f %8.1f %7d%n", r.scenario(),
                    r.threads(), r.contender(), r.opsPerSecond(), r.opsPerSecond() / anchor(results, r, "bucket4j"),
                    r.opsPerSecond() / anchor(results, r, "bare"), r.p50Micros(), r.p99Micros(), r.cpuMicros(),
                    r.allowed());
        }
    }

    private static double anchor(List<Result> results, Result r, String contender) {
        return results.stream()
                .filter(a -> a.scenario().equals(r.scenario()) && a.threads() == r.threads()
                        && a.contender().startsWith(contender))
                .mapToDouble(Result::opsPerSecond).findFirst().orElse(Double.NaN);
    }
}
