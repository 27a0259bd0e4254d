package dev.ratelimit.resilient;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Whether the shared store answered last time it was asked. Its only use is the log: a store
 * that stops answering is logged once, and once more when it answers again, not at every
 * request in between (a busy filter would otherwise write a line per request while it is down).
 * Metrics count the failures themselves, per rule.
 */
final class StoreHealth {

    // The decision path's logger, as before this class existed: logging settings name it.
    private static final System.Logger LOG = System.getLogger(ResilientRateLimiter.class.getName());

    private final AtomicBoolean storeDown = new AtomicBoolean();

    /** The store answered: logs that shared limits are enforced again, if it was down. */
    void answered() {
        if (storeDown.compareAndSet(true, false)) {
            LOG.log(System.Logger.Level.INFO, "The shared rate-limit store answers again: shared limits are enforced again");
        }
    }

    /**
     * The store could not be reached: logs it, if it was up.
     *
     * @param e what the store's call threw, whose message says why
     */
    void failed(RuntimeException e) {
        if (storeDown.compareAndSet(false, true)) {
            LOG.log(System.Logger.Level.WARNING, "The shared rate-limit store cannot be reached; applying each rule''s "
                    + "failure policy until it answers again: {0}", e.getMessage());
        }
    }
}
