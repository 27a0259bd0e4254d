package dev.ratelimit.servlet;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class TeardownTest {

    /** The Payara case: a close that fails mid-undeploy must not stop the others, nor throw. */
    @Test
    void everyStepRunsWhateverTheOthersThrow() {
        List<String> released = new ArrayList<>();
        assertThat(Teardown.quietly("first", () -> released.add("first"))).isTrue();
        assertThat(Teardown.quietly("client", () -> {
            throw new IllegalStateException("This web container has not yet been started");
        })).isFalse();
        assertThat(Teardown.quietly("classes", () -> {
            throw new NoClassDefFoundError("redis/clients/jedis/SomethingNew");
        })).isFalse();
        assertThat(Teardown.quietly("last", () -> released.add("last"))).isTrue();
        assertThat(Teardown.quietly("nothing", null)).isTrue();
        assertThat(released).containsExactly("first", "last");
    }

    @Test
    void destroyingAFilterThatNeverStartedDoesNothingAndThrowsNothing() {
        new RateLimitFilter().destroy();
    }
}
