package dev.ratelimit.it.jakarta;

import dev.ratelimit.jakarta.RateLimited;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.concurrent.atomic.AtomicInteger;

/** A CDI bean for the layered-request tests: one action per account ({@code c1}, keyed by {@code param:acct}). */
@ApplicationScoped
public class LayeredBean {

    private final AtomicInteger done = new AtomicInteger();

    /** A bean; the container makes it. */
    public LayeredBean() {
    }

    /**
     * An action on an account.
     *
     * @param acct the account
     */
    @RateLimited("c1")
    public void act(long acct) {
        done.incrementAndGet();
    }

    /** @return how many actions ran */
    public int done() {
        return done.get();
    }
}
