package dev.ratelimit.it;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Threads that keep the CPUs busy while a test runs, so that other threads are scheduled late, as
 * on a busy machine: a thread just started may not have run its first line when the test goes on.
 */
final class Spinners implements AutoCloseable {

    private final AtomicBoolean spinning = new AtomicBoolean(true);
    private final List<Thread> threads = new ArrayList<>();

    private Spinners(int count) {
        for (int i = 0; i < count; i++) {
            Thread spinner = new Thread(() -> {
                long turns = 0;
                while (spinning.get()) {
                    turns++;
                }
                if (turns < 0) {
                    throw new IllegalStateException("never: keeps the loop from being removed");
                }
            }, "spinner");
            spinner.setDaemon(true);
            spinner.start();
            threads.add(spinner);
        }
    }

    /**
     * Starts them.
     *
     * @param count how many threads spin
     * @return the running spinners; close to stop them
     */
    static Spinners start(int count) {
        return new Spinners(count);
    }

    /** Stops them and waits for each to end. */
    @Override
    public void close() throws InterruptedException {
        spinning.set(false);
        for (Thread spinner : threads) {
            spinner.join();
        }
    }
}
