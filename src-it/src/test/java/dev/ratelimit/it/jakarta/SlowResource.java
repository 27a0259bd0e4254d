package dev.ratelimit.it.jakarta;

import dev.ratelimit.jakarta.RateLimited;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** {@code /slow}: one at a time ({@code concurrency} rule {@code exports}), running until the test lets it end. */
@Path("slow")
public class SlowResource {

    /** Counted down when a call has entered the method. */
    static volatile CountDownLatch entered = new CountDownLatch(1);
    /** What the method waits for before it answers. */
    static volatile CountDownLatch release = new CountDownLatch(1);

    /**
     * Answers once released.
     *
     * @return {@code done}
     * @throws InterruptedException when interrupted
     */
    @GET
    @RateLimited("exports")
    public String get() throws InterruptedException {
        entered.countDown();
        if (!release.await(20, TimeUnit.SECONDS)) {
            throw new IllegalStateException("never released");
        }
        return "done";
    }
}
