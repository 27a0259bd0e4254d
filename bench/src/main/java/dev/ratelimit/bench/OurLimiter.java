package dev.ratelimit.bench;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** This project's Valkey limiter: one function call per decision, with one or several rules. */
final class OurLimiter implements Contender {

    /** {@code BENCH_PIPELINES}: the pipelines of the pipelined contenders, default the limiter's. */
    static final int PIPELINES = Integer.parseInt(System.getenv().getOrDefault("BENCH_PIPELINES",
            Integer.toString(ValkeyRateLimiter.DEFAULT_PIPELINES)));

    /** {@code BENCH_LEASE_TIME}: how long a local lease serves, default 50 ms. */
    static final Duration LEASE_TIME = Duration.parse("PT" + System.getenv().getOrDefault("BENCH_LEASE_TIME", "0.05S"));

    private final ValkeyRateLimiter limiter;
    private final List<Rule> rules;
    private final String name;

    /**
     * @param algorithms one rule per algorithm, all on the same key (several: one call decides all)
     * @param pipelines  {@link ValkeyRateLimiter.Builder#pipelines}
     */
    OurLimiter(String url, List<Algorithm> algorithms, long capacity, Duration refill, int pipelines) {
        this(url, algorithms, capacity, refill, pipelines, 0);
    }

    /**
     * @param lease the most units a local lease takes per key (0: none), for {@link #LEASE_TIME}
     */
    OurLimiter(String url, List<Algorithm> algorithms, long capacity, Duration refill, int pipelines, long lease) {
        ValkeyRateLimiter.Builder builder = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(url).withSocketTimeout(Duration.ofSeconds(5))
                        .withPoolMaxWait(Duration.ofSeconds(5)).withPool(64, 64))
                .keyPrefix("bench:ours")
                .pipelines(pipelines);
        List<Rule> rules = new ArrayList<>();
        for (Algorithm algorithm : algorithms) {
            Rule rule = Rule.of("bench-" + algorithm.id(), algorithm, capacity, refill);
            rules.add(rule);
            // Leases serve the token bucket, GCRA and the fixed window; the builder refuses the others.
            if (lease > 0 && (algorithm == Algorithm.TOKEN_BUCKET || algorithm == Algorithm.GCRA
                    || algorithm == Algorithm.FIXED_WINDOW)) {
                builder.localLease(rule, lease, LEASE_TIME);
            }
        }
        this.limiter = builder.build();
        this.rules = List.copyOf(rules);
        this.name = "ratelimit " + (algorithms.size() == 1 ? algorithms.get(0).id() : algorithms.size() + " rules")
                + (pipelines == 0 ? ", unpipelined"
                        : pipelines != ValkeyRateLimiter.DEFAULT_PIPELINES ? ", " + pipelines + " pipelines" : "")
                + (lease > 0 ? ", local leases of " + lease : "");
    }

    OurLimiter(String url, Algorithm algorithm, long capacity, Duration refill) {
        this(url, List.of(algorithm), capacity, refill, PIPELINES);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public boolean tryAcquire(String key) {
        if (rules.size() == 1) {
            return limiter.acquire(rules.get(0), key).allowed();
        }
        List<Claim> claims = new ArrayList<>(rules.size());
        for (Rule rule : rules) {
            claims.add(Claim.of(rule, key));
        }
        return limiter.acquireAll(claims).allowed();
    }

    @Override
    public void close() {
        limiter.close();
    }
}
