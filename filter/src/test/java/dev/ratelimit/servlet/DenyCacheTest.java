package dev.ratelimit.servlet;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class DenyCacheTest {

    @Test
    void deniesUntilTheGivenTimeThenForgets() {
        DenyCache cache = new DenyCache(10);
        cache.deny("login", "user:alice", 1_000, 0);
        assertThat(cache.remainingMillis("login", "user:alice", 400)).isEqualTo(600);
        assertThat(cache.remainingMillis("login", "user:bob", 400)).isZero();
        assertThat(cache.remainingMillis("api", "user:alice", 400)).isZero();
        assertThat(cache.remainingMillis("login", "user:alice", 1_000)).isZero();
        assertThat(cache.size()).isZero();
    }

    @Test
    void neverHoldsMoreThanItsBound() {
        DenyCache cache = new DenyCache(100);
        long future = System.currentTimeMillis() + 60_000;
        for (int i = 0; i < 100_000; i++) {
            cache.deny("r", "ip:" + i, future, future - 60_000);
        }
        assertThat(cache.size()).isEqualTo(100);
    }
}
