package dev.ratelimit.valkey.lease;

import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/** The daemon thread that ends leases and gives back their unused units, on a fixed delay. */
final class LeaseSweeper {

    private static final System.Logger LOG = System.getLogger("dev.ratelimit.valkey.ValkeyRateLimiter");

    private LeaseSweeper() {
    }

    /**
     * Runs {@code sweep} every {@code periodMillis}, until the returned executor is shut down;
     * a sweep that throws is logged and the next one runs as planned.
     */
    static ScheduledExecutorService every(long periodMillis, Runnable sweep) {
        ScheduledExecutorService sweeper = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "ratelimit-lease-sweeper");
            thread.setDaemon(true);
            return thread;
        });
        sweeper.scheduleWithFixedDelay(() -> {
            try {
                sweep.run();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "lease sweep failed; leases end at the next one", e);
            }
        }, periodMillis, periodMillis, TimeUnit.MILLISECONDS);
        return sweeper;
    }

    /**
     * Runs {@code work} on the sweeper's thread as soon as it is free (after the running sweep),
     * unless it is shut down; a run that throws is logged.
     */
    static void now(ScheduledExecutorService sweeper, Runnable work) {
        try {
            sweeper.execute(() -> {
                try {
                    work.run();
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "giving back ended leases failed; they go at the next sweep", e);
                }
            });
        } catch (RejectedExecutionException e) {
            // Shut down: the close gives back what is left.
        }
    }
}
