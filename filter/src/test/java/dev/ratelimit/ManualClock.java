package dev.ratelimit;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/** A clock the test moves by hand, for the client-clock mode. */
public final class ManualClock implements LongSupplier {

    private final AtomicLong now;

    /**
     * A clock showing the given time.
     *
     * @param startMillis epoch ms
     */
    public ManualClock(long startMillis) {
        this.now = new AtomicLong(startMillis);
    }

    @Override
    public long getAsLong() {
        return now.get();
    }

    /**
     * Sets the time.
     *
     * @param millis epoch ms
     */
    public void set(long millis) {
        now.set(millis);
    }

    /**
     * Moves the time forward.
     *
     * @param millis ms to add
     */
    public void advance(long millis) {
        now.addAndGet(millis);
    }
}
