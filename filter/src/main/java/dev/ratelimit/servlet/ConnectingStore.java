package dev.ratelimit.servlet;

import dev.ratelimit.Claim;
import dev.ratelimit.Decision;
import dev.ratelimit.Decisions;
import dev.ratelimit.RateLimitException;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Reservation;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The Valkey limiter of a start that could not reach a Valkey Cluster or the sentinels to learn
 * where the primaries are. Until one answers, every call fails as the store failing
 * ({@link RateLimitException}), so each rule's {@code on-failure} policy answers it, as when a
 * standalone Valkey is down at the start; a daemon thread tries again after 1 s, then twice as
 * long each time up to 30 s. No caller waits for an attempt, and none is made after {@link #close}.
 */
final class ConnectingStore implements RateLimiter {

    private static final System.Logger LOG = System.getLogger(ConnectingStore.class.getName());
    private static final Duration FIRST_RETRY = Duration.ofSeconds(1);
    private static final Duration LAST_RETRY = Duration.ofSeconds(30);

    private final Supplier<ValkeyRateLimiter> connect;
    private final Consumer<ValkeyRateLimiter> connected;
    private final String what;
    private final Thread retries;
    private volatile RuntimeException failure;
    /** Set once, under the lock with {@link #closed}; read by every call without it. */
    private volatile ValkeyRateLimiter limiter;
    private boolean closed;

    private ConnectingStore(Supplier<ValkeyRateLimiter> connect, Consumer<ValkeyRateLimiter> connected, String what,
                            RuntimeException failure) {
        this.connect = connect;
        this.connected = connected;
        this.what = what;
        this.failure = failure;
        this.retries = new Thread(this::retry, "ratelimit-connect");
        this.retries.setDaemon(true);
    }

    /**
     * The Valkey limiter, connected now or, failing that, by a thread that keeps trying.
     *
     * @param connect   builds the limiter, connecting (a cluster or Sentinel client asks where the primaries are)
     * @param connected told of the limiter once it is connected, now or later
     * @param what      what is reached, for the log and the calls' errors (no credentials)
     * @return the connected limiter, or one that fails every call as the store failing until it connects
     */
    static RateLimiter start(Supplier<ValkeyRateLimiter> connect, Consumer<ValkeyRateLimiter> connected, String what) {
        try {
            ValkeyRateLimiter limiter = connect.get();
            connected.accept(limiter);
            return limiter;
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "Rate limiting cannot reach {0} ({1}): each rule''s on-failure policy "
                    + "answers until it does; trying again in the background", what, e.getMessage());
            ConnectingStore store = new ConnectingStore(connect, connected, what, e);
            store.retries.start();
            return store;
        }
    }

    private void retry() {
        Duration wait = FIRST_RETRY;
        while (true) {
            try {
                Thread.sleep(wait.toMillis());
            } catch (InterruptedException e) {
                return; // closed
            }
            synchronized (this) {
                if (closed) {
                    return;
                }
            }
            try {
                ValkeyRateLimiter reached = connect.get();
                synchronized (this) {
                    if (closed) {
                        reached.close();
                        return;
                    }
                    limiter = reached;
                    // Under the lock: a close now waits, and nothing is told of a limiter it closed.
                    connected.accept(reached);
                }
                LOG.log(System.Logger.Level.INFO, "Rate limiting reached {0}", what);
                return;
            } catch (RuntimeException e) {
                failure = e;
                Duration doubled = wait.multipliedBy(2);
                wait = doubled.compareTo(LAST_RETRY) < 0 ? doubled : LAST_RETRY;
            }
        }
    }

    /** The connected limiter, or the store's failure. */
    private ValkeyRateLimiter limiter() {
        ValkeyRateLimiter reached = limiter;
        if (reached == null) {
            throw new RateLimitException("Valkey not reached yet: " + what + " did not answer ("
                    + failure.getMessage() + ")", failure);
        }
        return reached;
    }

    @Override
    public Decisions acquireAll(List<Claim> claims) {
        return limiter().acquireAll(claims);
    }

    @Override
    public Reservation reserveAll(List<Claim> claims) {
        return limiter().reserveAll(claims);
    }

    @Override
    public Decision peek(Rule rule, String key, long cost) {
        return limiter().peek(rule, key, cost);
    }

    @Override
    public void reset(Rule rule, String key) {
        limiter().reset(rule, key);
    }

    @Override
    public void close() {
        ValkeyRateLimiter reached;
        synchronized (this) {
            closed = true;
            reached = limiter;
        }
        retries.interrupt();
        if (reached != null) {
            reached.close();
        }
    }
}
