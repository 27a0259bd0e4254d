package dev.ratelimit.bench;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;

import java.time.Duration;

/** This project's Valkey limiter: one EVALSHA per decision. */
final class OurLimiter implements Contender {

    private final ValkeyRateLimiter limiter;
    private final Rule rule;
    private final String name;

    OurLimiter(String url, Algorithm algorithm, long capacity, Duration refill) {
        this.limiter = ValkeyRateLimiter.builder()
                .settings(ValkeySettings.of(url).withSocketTimeout(Duration.ofSeconds(5))
                        .withPoolMaxWait(Duration.ofSeconds(5)).withPool(64, 64))
                .keyPrefix("bench:ours:" + algorithm.id())
                .build();
        this.rule = Rule.of("bench", algorithm, capacity, refill);
        this.name = "ratelimit " + algorithm.id();
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public boolean tryAcquire(String key) {
        return limiter.acquire(rule, key).allowed();
    }

    @Override
    public void close() {
        limiter.close();
    }
}
