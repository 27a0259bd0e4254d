package dev.ratelimit;

import java.util.List;
import java.util.Objects;

/**
 * A limiter around another that, once armed, runs a step of the test's between the store's next
 * answer of the armed kind (allowed or rejected) and its return to the caller: an interleaving
 * of concurrent requests forced, not hoped for. The step runs on the answering thread; to let
 * another thread act meanwhile, it hands over and waits (see {@link #onOtherThread}).
 */
public final class PausingStore implements RateLimiter {

    private final RateLimiter store;
    private volatile Boolean armedFor;
    private volatile Runnable step;
    private volatile Runnable beforeReset;

    /**
     * Wraps a store.
     *
     * @param store the limiter that decides
     */
    public PausingStore(RateLimiter store) {
        this.store = Objects.requireNonNull(store, "store");
    }

    /**
     * Runs {@code step} once, after the next answer that is {@code allowed} (or not) and before
     * it is returned.
     *
     * @param allowed whether to pause on an allowed answer or on a rejection
     * @param step    what happens meanwhile
     */
    public void afterNextAnswer(boolean allowed, Runnable step) {
        this.step = Objects.requireNonNull(step, "step");
        this.armedFor = allowed;
    }

    /**
     * Runs {@code step} once, when the next reset reaches the store and before it is done there.
     *
     * @param step what happens meanwhile
     */
    public void beforeNextReset(Runnable step) {
        this.beforeReset = Objects.requireNonNull(step, "step");
    }

    /**
     * A step that runs {@code work} on a new thread and waits for it to finish.
     *
     * @param work what another thread does meanwhile
     * @return the step
     */
    public static Runnable onOtherThread(Runnable work) {
        return () -> {
            Thread other = new Thread(work, "concurrent-step");
            other.start();
            try {
                other.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while the concurrent step ran", e);
            }
        };
    }

    private void pause(boolean allowed) {
        Runnable armed = step;
        if (armed != null && armedFor != null && armedFor == allowed) {
            step = null;
            armedFor = null;
            armed.run();
        }
    }

    @Override
    public Decisions acquireAll(List<Claim> claims) {
        Decisions answer = store.acquireAll(claims);
        pause(answer.allowed());
        return answer;
    }

    @Override
    public Reservation reserveAll(List<Claim> claims) {
        Reservation answer = store.reserveAll(claims);
        pause(answer.allowed());
        return answer;
    }

    @Override
    public Decision peek(Rule rule, String key, long cost) {
        return store.peek(rule, key, cost);
    }

    @Override
    public void reset(Rule rule, String key) {
        Runnable armed = beforeReset;
        if (armed != null) {
            beforeReset = null;
            armed.run();
        }
        store.reset(rule, key);
    }

    @Override
    public void close() {
        store.close();
    }
}
