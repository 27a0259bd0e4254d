package dev.ratelimit.internal;

import dev.ratelimit.RateLimitListener;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An application's {@link RateLimitListener}, called so that whatever it throws, an
 * {@link Error} included (a failed assertion, a class it cannot load), never fails a request,
 * skips a rate limit or counts as a store failure: caught, logged once (then at DEBUG), and the
 * next event is delivered as usual.
 */
public final class GuardedListener implements RateLimitListener {

    private static final System.Logger LOG = System.getLogger(GuardedListener.class.getName());

    private final RateLimitListener delegate;
    private final AtomicBoolean failureLogged = new AtomicBoolean();

    private GuardedListener(RateLimitListener delegate) {
        this.delegate = delegate;
    }

    /**
     * Guards a listener.
     *
     * @param listener the application's listener
     * @return the listener, guarded (itself if it is already guarded or does nothing)
     */
    public static RateLimitListener of(RateLimitListener listener) {
        Objects.requireNonNull(listener, "listener");
        return listener == RateLimitListener.NONE || listener instanceof GuardedListener ? listener
                : new GuardedListener(listener);
    }

    @Override
    public void onEvent(String rule, Event event) {
        try {
            delegate.onEvent(rule, event);
        } catch (Throwable e) {
            failed(e);
        }
    }

    @Override
    public void onDecisionTime(String rule, long nanos) {
        try {
            delegate.onDecisionTime(rule, nanos);
        } catch (Throwable e) {
            failed(e);
        }
    }

    @Override
    public void onDelay(String rule, long nanos) {
        try {
            delegate.onDelay(rule, nanos);
        } catch (Throwable e) {
            failed(e);
        }
    }

    @Override
    public void onClose() {
        try {
            delegate.onClose();
        } catch (Throwable e) {
            failed(e);
        }
    }

    @Override
    public void onBreakerChange(boolean open) {
        try {
            delegate.onBreakerChange(open);
        } catch (Throwable e) {
            failed(e);
        }
    }

    private void failed(Throwable e) {
        if (failureLogged.compareAndSet(false, true)) {
            LOG.log(System.Logger.Level.WARNING, "The application''s RateLimitListener "
                    + delegate.getClass().getName() + " threw; rate limiting goes on and further failures are "
                    + "logged at DEBUG only", e);
        } else {
            LOG.log(System.Logger.Level.DEBUG, "RateLimitListener threw again: {0}", e.toString());
        }
    }
}
