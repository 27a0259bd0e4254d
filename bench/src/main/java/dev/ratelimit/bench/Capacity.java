package dev.ratelimit.bench;

import dev.ratelimit.Algorithm;
import dev.ratelimit.it.ValkeyServer;
import redis.clients.jedis.Jedis;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;

/**
 * What a deployment at internet scale needs, on paper from measurements on one Valkey:
 * <ol>
 *   <li><b>memory per key</b> of every algorithm, the minimal script's state and Bucket4j's:
 *       {@code INFO memory}'s {@code used_memory} before and after {@code BENCH_KEYS} keys
 *       (default 1,000,000) get one decision each, per key, and {@code MEMORY USAGE} of one;</li>
 *   <li><b>Valkey calls per decision</b> with and without local leases of {@code BENCH_LEASE}
 *       (64) for {@code BENCH_LEASE_TIME} ({@code 0.05S}, in seconds) on a Zipf workload (s = 1.0 and 1.2 over 1,000,000 keys) and on keys seen once
 *       (uniform over 100,000), 8 threads: the calls a cluster must serve, counted, not timed;</li>
 *   <li><b>Valkey CPU per call</b> ({@code usec_per_call}, {@link ServerCost}) for one token
 *       bucket, and the decisions per second one Valkey core serves at 70% busy;</li>
 *   <li>the <b>table</b>: primaries and memory for 100k, 1M and 10M decisions per second with
 *       1M, 10M and 100M active keys (token bucket), with and without leases on the Zipf
 *       workloads, derived from the above (the assumptions are printed with it).</li>
 * </ol>
 * Run: {@code ./mvnw -q -pl bench -am -DskipTests install && ./mvnw -q -pl bench exec:java
 * -Dexec.mainClass=dev.ratelimit.bench.Capacity} (see {@code bench/capacity.sh}).
 */
public final class Capacity {

    /** A primary is counted full at this share of one core: headroom for failover and bursts. */
    static final double BUSY = 0.7;
    /** Memory one primary holds for keys: a 32 GiB machine, half kept for forks, buffers and growth. */
    static final double KEY_MEMORY = 16.0 * (1L << 30);

    private Capacity() {
    }

    /** Bytes per key of one kind of state. */
    record Memory(String what, double bytesPerKey, long sampleUsage, String sampleKey) {
    }

    /** Valkey calls per decision on one workload. */
    record Calls(String workload, double withoutLeases, double withLeases, double opsWithout, double opsWith) {
    }

    /**
     * Measures and prints.
     *
     * @param args unused
     * @throws Exception when Valkey cannot be had
     */
    public static void main(String[] args) throws Exception {
        int keys = Integer.parseInt(System.getenv().getOrDefault("BENCH_KEYS", "1000000"));
        int decisions = Integer.parseInt(System.getenv().getOrDefault("BENCH_DECISIONS", "400000"));
        long lease = Long.parseLong(System.getenv().getOrDefault("BENCH_LEASE", "64"));
        // One part alone, e.g. the calls per decision for several lease times in turn.
        String parts = System.getenv().getOrDefault("BENCH_PARTS", "memory,calls,server");
        try (ValkeyServer valkey = ValkeyServer.provide(); Jedis admin = new Jedis(URI.create(valkey.url()))) {
            String url = valkey.url();
            List<Memory> memory = new ArrayList<>();
            for (Algorithm algorithm : parts.contains("memory") ? Algorithm.values() : new Algorithm[0]) {
                memory.add(memory(admin, algorithm.id(), keys,
                        () -> new OurLimiter(url, algorithm, 10, Duration.ofHours(1))));
            }
            if (parts.contains("memory")) {
                memory.add(memory(admin, "minimal script", keys,
                        () -> new BareJedis(url, 10, Duration.ofHours(1))));
                memory.add(memory(admin, "bucket4j", Math.min(keys, 200_000),
                        () -> new Bucket4jLimiter(url, 10, Duration.ofHours(1))));
                System.out.printf(Locale.ROOT, "%nValkey memory per key (used_memory before and after, per key; MEMORY USAGE of one key)%n");
                for (Memory m : memory) {
                    System.out.printf(Locale.ROOT, "%-24s %7.0f bytes/key  (MEMORY USAGE %d bytes of %s keys)%n", m.what(),
                            m.bytesPerKey(), m.sampleUsage(), m.sampleKey());
                }
            }
            if (!parts.contains("calls")) {
                if (parts.contains("server")) {
                    ServerCost.print(ServerCost.measure(url, 20_000), 20_000);
                }
                return;
            }

            List<Calls> calls = new ArrayList<>();
            Zipf zipf10 = new Zipf(1_000_000, 1.0);
            Zipf zipf12 = new Zipf(1_000_000, 1.2);
            calls.add(calls(admin, url, "zipf s=1.0, 1M keys", decisions, lease, i -> "z10:" + zipf10.next()));
            calls.add(calls(admin, url, "zipf s=1.2, 1M keys", decisions, lease, i -> "z12:" + zipf12.next()));
            calls.add(calls(admin, url, "uniform, 100k keys", decisions, lease,
                    i -> "u:" + ThreadLocalRandom.current().nextInt(100_000)));
            System.out.printf(Locale.ROOT, "%nValkey calls per decision, 8 threads, %d decisions, token bucket; leases of %d for %d ms%n",
                    decisions, lease, OurLimiter.LEASE_TIME.toMillis());
            for (Calls c : calls) {
                System.out.printf(Locale.ROOT, "%-22s without leases %.3f calls/decision (%.0f/s), with leases %.3f (%.0f/s): %.2fx the throughput%n",
                        c.workload(), c.withoutLeases(), c.opsWithout(), c.withLeases(), c.opsWith(), c.opsWith() / c.opsWithout());
            }

            if (!parts.contains("server") || !parts.contains("memory")) {
                return;
            }
            List<ServerCost.Cost> costs = ServerCost.measure(url, 20_000);
            double usec = costs.stream().filter(c -> c.what().equals(Algorithm.TOKEN_BUCKET.id())).findFirst()
                    .orElseThrow().microsPerCall();
            ServerCost.print(costs, 20_000);
            double bytes = memory.stream().filter(m -> m.what().equals(Algorithm.TOKEN_BUCKET.id())).findFirst()
                    .orElseThrow().bytesPerKey();
            table(usec, bytes, calls);
        }
    }

    /**
     * Creates {@code keys} keys with one decision each and measures what they take: ten units an
     * hour, so that no key's state expires while they are made (a key whose bucket is full
     * again is gone).
     */
    private static Memory memory(Jedis admin, String what, int keys, java.util.function.Supplier<Contender> make)
            throws InterruptedException {
        flush(admin);
        try (Contender contender = make.get()) {
            contender.tryAcquire("warm");
            flush(admin);
            long before = usedMemory(admin);
            AtomicLong next = new AtomicLong();
            run(8, () -> {
                for (long i; (i = next.getAndIncrement()) < keys; ) {
                    contender.tryAcquire("m:" + i);
                }
            });
            long after = usedMemory(admin);
            long size = admin.dbSize();
            String sample = admin.randomKey();
            Long usage = sample == null ? null : admin.memoryUsage(sample);
            return new Memory(what, (after - before) / (double) size, usage == null ? 0 : usage,
                    sample + " of " + size);
        } finally {
            flush(admin);
        }
    }

    /**
     * Empties the server and waits until it has freed the memory: a {@code FLUSHALL} may free in
     * the background, and {@code used_memory} read meanwhile would count the last contender's keys.
     */
    private static void flush(Jedis admin) throws InterruptedException {
        admin.flushAll(redis.clients.jedis.args.FlushMode.SYNC);
        for (int i = 0; i < 600 && !admin.info("memory").contains("lazyfree_pending_objects:0"); i++) {
            Thread.sleep(50);
        }
    }

    private static long usedMemory(Jedis admin) {
        for (String line : admin.info("memory").split("\\r?\\n")) {
            if (line.startsWith("used_memory:")) {
                return Long.parseLong(line.substring("used_memory:".length()).trim());
            }
        }
        throw new IllegalStateException("no used_memory in INFO memory");
    }

    /** Decisions on a workload with and without leases, counting the function calls Valkey ran. */
    private static Calls calls(Jedis admin, String url, String workload, int decisions, long lease,
                               LongFunction<String> key) throws InterruptedException {
        double[] perDecision = new double[2];
        double[] perSecond = new double[2];
        for (int leased = 0; leased < 2; leased++) {
            flush(admin);
            try (Contender contender = new OurLimiter(url, List.of(Algorithm.TOKEN_BUCKET), Bench.UNREACHED,
                    Duration.ofHours(1), OurLimiter.PIPELINES, leased == 0 ? 0 : lease)) {
                // Warm: the JIT, and the leases' demand of the hot keys.
                drive(contender, decisions / 4, key);
                admin.configResetStat();
                long start = System.nanoTime();
                drive(contender, decisions, key);
                double seconds = (System.nanoTime() - start) / 1e9;
                perDecision[leased] = fcalls(admin) / (double) decisions;
                perSecond[leased] = decisions / seconds;
            }
        }
        return new Calls(workload, perDecision[0], perDecision[1], perSecond[0], perSecond[1]);
    }

    private static void drive(Contender contender, int decisions, LongFunction<String> key) throws InterruptedException {
        AtomicLong next = new AtomicLong();
        run(8, () -> {
            for (long i; (i = next.getAndIncrement()) < decisions; ) {
                contender.tryAcquire(key.apply(i));
            }
        });
    }

    private static long fcalls(Jedis admin) {
        for (String line : admin.info("commandstats").split("\\r?\\n")) {
            if (line.startsWith("cmdstat_fcall:")) {
                String calls = line.substring(line.indexOf("calls=") + 6);
                return Long.parseLong(calls.substring(0, calls.indexOf(',')));
            }
        }
        return 0;
    }

    private static void run(int threads, Runnable work) throws InterruptedException {
        List<Thread> started = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread thread = new Thread(work);
            thread.start();
            started.add(thread);
        }
        for (Thread thread : started) {
            thread.join();
        }
    }

    /** The capacity table, derived: every figure in it comes from the measurements above and the two assumptions. */
    private static void table(double usecPerCall, double bytesPerKey, List<Calls> calls) {
        double callsPerCore = BUSY * 1e6 / usecPerCall;
        System.out.printf(Locale.ROOT, "%nCapacity, derived (token bucket): one primary serves %.0f calls/s at %.0f%% of a core "
                + "(%.2f us per call, measured) and holds %.0f GiB of keys (assumed); %.0f bytes per key (measured)%n",
                callsPerCore, BUSY * 100, usecPerCall, KEY_MEMORY / (1L << 30), bytesPerKey);
        Map<String, Double> perDecision = new LinkedHashMap<>();
        perDecision.put("no leases", 1.0);
        for (Calls c : calls) {
            if (c.workload().startsWith("zipf")) {
                perDecision.put("leases, " + c.workload().substring(0, c.workload().indexOf(',')), c.withLeases());
            }
        }
        System.out.printf(Locale.ROOT, "%-30s %-12s %-13s %12s %8s %10s%n", "calls/decision", "decisions/s", "active keys",
                "key memory", "for CPU", "primaries");
        for (Map.Entry<String, Double> workload : perDecision.entrySet()) {
            for (long rate : new long[] {100_000, 1_000_000, 10_000_000}) {
                for (long active : new long[] {1_000_000, 10_000_000, 100_000_000}) {
                    double memory = active * bytesPerKey;
                    long forCpu = (long) Math.ceil(rate * workload.getValue() / callsPerCore);
                    long forMemory = (long) Math.ceil(memory / KEY_MEMORY);
                    System.out.printf(Locale.ROOT, "%-30s %-12s %-13s %8.1f GiB %8d %10d%n",
                            workload.getKey() + String.format(Locale.ROOT, " (%.3f)", workload.getValue()),
                            String.format(Locale.ROOT, "%,d", rate), String.format(Locale.ROOT, "%,d", active),
                            memory / (1L << 30), forCpu, Math.max(1, Math.max(forCpu, forMemory)));
                }
            }
        }
    }

    /** Ranks 1..n drawn with probability proportional to 1 / rank^s. */
    static final class Zipf {
        private final double[] cumulative;

        Zipf(int n, double s) {
            cumulative = new double[n];
            double sum = 0;
            for (int i = 0; i < n; i++) {
                sum += 1.0 / Math.pow(i + 1, s);
                cumulative[i] = sum;
            }
            for (int i = 0; i < n; i++) {
                cumulative[i] /= sum;
            }
        }

        int next() {
            double u = ThreadLocalRandom.current().nextDouble();
            int lo = 0;
            int hi = cumulative.length - 1;
            while (lo < hi) {
                int mid = (lo + hi) >>> 1;
                if (cumulative[mid] < u) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            return lo + 1;
        }
    }
}
