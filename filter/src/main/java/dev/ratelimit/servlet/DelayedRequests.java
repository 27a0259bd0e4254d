package dev.ratelimit.servlet;

import dev.ratelimit.Reservation;
import dev.ratelimit.internal.QueuePlace;
import dev.ratelimit.internal.Refundable;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Requests admitted for a slot to come ({@code max-delay}), held until it without a thread: the
 * request is suspended ({@link HttpServletRequest#startAsync}) and dispatched again at its slot
 * by one timer thread, its units taken already. At most {@code ratelimit.max-delayed-requests} at
 * once per instance: once that many are held, a request is decided as if its rules did not delay
 * ({@link #mayHold}), and refused if they refuse. (Requests being decided at that moment may each
 * still be held: the bound is passed by at most as many as the container decides at once, rather
 * than room taken by requests that will never need it.)
 *
 * <p>Each held request ends one way, once: dispatched at its slot; or, if the container reports
 * the client gone or times the request out first, its units given back; or, when the filter
 * stops, answered 503 with its units given back. (A bucket gives back only the last request held
 * for a slot: any other's slot passes unused, see {@link Reservation}.) So that a stop gives back
 * the last held first, requests still being decided that may be held are counted from
 * {@link #mayHold} to {@link #decided}: the stop waits for them, at most {@link #DECIDING_WAIT}.
 * One per started filter.
 */
final class DelayedRequests {

    // The filter's own logger name: operators configure the filter's logging by its class.
    private static final System.Logger LOG = System.getLogger(RateLimitFilter.class.getName());

    /**
     * Beyond its slot, how long the container may keep a held request before it times it out:
     * the timer is late only on a stalled machine, and a timeout gives the units back.
     */
    static final Duration GRACE = Duration.ofSeconds(30);

    /**
     * How long a stop waits for requests still being decided that may be held: a decision is
     * bounded by the store's timeouts, far below this.
     */
    static final Duration DECIDING_WAIT = Duration.ofSeconds(5);

    /** Whether a filter not mapped for ASYNC was logged: once per application. */
    private static final java.util.concurrent.atomic.AtomicBoolean UNMAPPED_LOGGED =
            new java.util.concurrent.atomic.AtomicBoolean();

    private final int max;
    private final AtomicInteger count = new AtomicInteger();
    private final ScheduledThreadPoolExecutor timer;
    private final Set<Held> held = ConcurrentHashMap.newKeySet();
    /** Requests between {@link #mayHold} (true) and {@link #decided}. */
    private final AtomicInteger deciding = new AtomicInteger();
    private volatile boolean stopped;
    /** Set once a stop has taken the held requests to answer: one held later answers itself. */
    private volatile boolean collected;

    /**
     * @param max the most requests held at once; 0: none is ever delayed
     */
    DelayedRequests(int max) {
        this.max = max;
        this.timer = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "ratelimit-delayed-requests");
            thread.setDaemon(true);
            return thread;
        });
        // A request dispatched early (given back, stopped) leaves no task behind.
        timer.setRemoveOnCancelPolicy(true);
    }

    /**
     * Whether the request may be held: it can be suspended, and fewer than the most are held.
     * If so, the request counts as being decided until {@link #decided} (a stop waits for it to
     * be held or not, so that it gives back in its turn): call that once it is held or not.
     *
     * @return whether its rules may delay it
     */
    boolean mayHold(HttpServletRequest request) {
        if (stopped || !request.isAsyncSupported() || request.isAsyncStarted() || count.get() >= max) {
            return false;
        }
        deciding.incrementAndGet();
        if (stopped) {
            // The stop began meanwhile, and may not have seen this one counted.
            decided();
            return false;
        }
        return true;
    }

    /** After {@link #mayHold} said true: the request is held now, or will not be. */
    void decided() {
        if (deciding.decrementAndGet() == 0 && stopped) {
            synchronized (deciding) {
                deciding.notifyAll();
            }
        }
    }

    /**
     * Suspends an allowed request until its slot, then dispatches it again to where it was going
     * (with the request and response as the filter got them, wrappers of filters before it
     * included): {@link DispatchHandler} then runs the application for it.
     *
     * @param delay       the time until its slot, positive
     * @param reservation what its rules took: given back if it never reaches its slot
     * @param account     its account, which will answer it if the filter stops first
     */
    void hold(HttpServletRequest request, HttpServletResponse response, Duration delay, Reservation reservation,
              RequestAccount account) {
        AsyncContext context = request.startAsync(request, response);
        count.incrementAndGet();
        context.setTimeout(delay.plus(GRACE).toMillis());
        Held one = new Held(context, reservation, account, System.nanoTime() + delay.toNanos());
        held.add(one);
        context.addListener((Ending) one::ended, request, response);
        try {
            one.slot = timer.schedule(one::dispatch, delay.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // The filter is stopping: answered below, as every other.
        }
        if (collected && one.end(End.GIVEN_BACK)) {
            // Held after the stop took the others (it waited for this one in vain): answered
            // as every other, its units given back if it is the last held.
            one.answer(delay);
            one.giveBack();
        }
    }

    /** How many requests are held now. */
    int size() {
        return held.size();
    }

    /**
     * Answers every held request 503 with its units given back, then stops the timer: an
     * undeploy loses no request and leaves no unit counted for work that never ran.
     */
    void stop() {
        stopped = true;
        // No dispatch from now on; every held request is answered at once, before any give-back,
        // which may wait on an unresponsive store.
        timer.shutdownNow();
        // A request decided for a slot now is held in a moment: with the others, so that the
        // give-backs go the last held first (one given back on its own would break the order).
        awaitDecided();
        collected = true;
        List<Held> answered = new ArrayList<>();
        for (Held one : held) {
            if (one.end(End.GIVEN_BACK)) {
                one.answer(Duration.ofNanos(Math.max(0, one.slotNanos - System.nanoTime())));
                answered.add(one);
            }
        }
        // The last held first: a bucket gives back only its last request held (see Reservation),
        // so each in turn is the last.
        for (Held one : lastFirst(answered)) {
            one.giveBack();
        }
    }

    /**
     * The requests in the order to give back: in each key's queue the last first, as the store
     * that took their units counts (see {@link QueuePlace}); by their slots here for those of a
     * limiter that tells no place. (A slot here is reckoned from when the request was held: a
     * thread stalled between the store's answer and the hold would put its request out of turn.)
     */
    private static List<Held> lastFirst(List<Held> requests) {
        Map<Queue, List<Held>> queues = new LinkedHashMap<>();
        List<Held> unplaced = new ArrayList<>();
        for (Held one : requests) {
            QueuePlace place = Refundable.placeOf(one.reservation);
            if (place == null) {
                unplaced.add(one);
            } else {
                queues.computeIfAbsent(new Queue(place.rule(), place.key()), q -> new ArrayList<>()).add(one);
            }
        }
        List<Held> ordered = new ArrayList<>(requests.size());
        for (List<Held> queue : queues.values()) {
            queue.sort((a, b) -> Refundable.placeOf(b.reservation).compareInQueue(Refundable.placeOf(a.reservation)));
            ordered.addAll(queue);
        }
        unplaced.sort(Comparator.comparingLong((Held one) -> one.slotNanos).reversed());
        ordered.addAll(unplaced);
        return ordered;
    }

    private void awaitDecided() {
        long deadline = System.nanoTime() + DECIDING_WAIT.toNanos();
        synchronized (deciding) {
            long left;
            while (deciding.get() > 0 && (left = deadline - System.nanoTime()) > 0) {
                try {
                    TimeUnit.NANOSECONDS.timedWait(deciding, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /** A key's queue of requests held: one rule's, one key's. */
    private record Queue(String rule, String key) { }

    /** What becomes of a held request: exactly one of these, once. */
    private enum End { DISPATCHED, GIVEN_BACK }

    /** What the container tells of a held request. */
    private enum Event { ERROR, TIMEOUT, COMPLETE }

    /**
     * The listener of a held request: an interface, its one instance a lambda, for the reason
     * {@link OutcomeCounting}'s {@code Completion} gives (a Jakarta EE server makes a component
     * of every concrete {@link AsyncListener} class in the deployment).
     */
    @FunctionalInterface
    private interface Ending extends AsyncListener {

        void ended(Event event, AsyncEvent details);

        @Override
        default void onError(AsyncEvent event) {
            ended(Event.ERROR, event);
        }

        @Override
        default void onTimeout(AsyncEvent event) {
            ended(Event.TIMEOUT, event);
        }

        @Override
        default void onComplete(AsyncEvent event) {
            ended(Event.COMPLETE, event);
        }

        @Override
        default void onStartAsync(AsyncEvent event) {
            // The application suspends the dispatched request itself: a new async cycle, whose
            // end must still be heard (a dispatch the filter did not see is settled then).
            event.getAsyncContext().addListener(this, event.getSuppliedRequest(), event.getSuppliedResponse());
        }
    }

    /** One held request, ended once: dispatched at its slot, or given back. */
    private final class Held {
        private final AsyncContext context;
        private final Reservation reservation;
        private final RequestAccount account;
        private final long slotNanos;
        private final AtomicReference<End> end = new AtomicReference<>();
        private volatile ScheduledFuture<?> slot;

        Held(AsyncContext context, Reservation reservation, RequestAccount account, long slotNanos) {
            this.context = context;
            this.reservation = reservation;
            this.account = account;
            this.slotNanos = slotNanos;
        }

        /** At its slot: the request goes on. */
        void dispatch() {
            if (end(End.DISPATCHED)) {
                try {
                    context.dispatch();
                } catch (RuntimeException e) {
                    // The application is stopping (a container that waits for held requests
                    // before it stops the filter fails their dispatch), or the request was ended
                    // meanwhile: the work will not run; answered as at a stop, if still possible.
                    LOG.log(System.Logger.Level.DEBUG, "A delayed request could not be dispatched", e);
                    // Taken out of the account first, so that the completion the answer brings
                    // does not settle them as if they had run; answered before the give-back,
                    // which may wait on an unresponsive store.
                    account.unresumedResource();
                    account.resumeDelayed();
                    answer(Duration.ZERO);
                    giveBack();
                }
            }
        }

        /** Answers 503, retry after {@code untilSlot}, and completes the request, if it can still be. */
        private void answer(Duration untilSlot) {
            try {
                Rejections.stopping((HttpServletResponse) context.getResponse(), untilSlot, account);
                context.complete();
            } catch (IOException | RuntimeException e) {
                // The client is gone or the container completed it: nothing more to answer.
                LOG.log(System.Logger.Level.DEBUG, "A delayed request could not be answered as the filter stopped", e);
            }
        }

        private boolean end(End how) {
            if (!end.compareAndSet(null, how)) {
                return false;
            }
            held.remove(this);
            count.decrementAndGet();
            ScheduledFuture<?> scheduled = slot;
            if (how != End.DISPATCHED && scheduled != null) {
                scheduled.cancel(false);
            }
            return true;
        }

        private void giveBack() {
            try {
                reservation.cancel();
            } catch (RuntimeException e) {
                // A limiter of the application's own that throws: its units stay counted.
                LOG.log(System.Logger.Level.DEBUG, "A delayed request's units could not be given back", e);
            }
        }

        /**
         * Before its slot: the client hung up (or the connection failed), the container timed
         * it out (held past its slot and the grace: a stalled timer) or completed it (shutting
         * down): the work never runs, its units go back. After its dispatch, nothing to do, but
         * for a filter the dispatch did not pass through (not mapped for {@code ASYNC}): the
         * request is settled by its response here.
         */
        void ended(Event event, AsyncEvent details) {
            if (!end(End.GIVEN_BACK)) {
                // Ended already: dispatched (then settled here if the filter never saw the
                // dispatch), or given back and answered by the filter itself.
                if (event == Event.COMPLETE && end.get() == End.DISPATCHED) {
                    settleMissed(details);
                }
                return;
            }
            giveBack();
            if (event == Event.TIMEOUT) {
                answer(Duration.ZERO);
            } else if (event == Event.ERROR) {
                complete();
            }
        }

        /**
         * After the dispatch at the slot, once the request is complete: a part held for the slot
         * that the dispatch never ran by is settled by the response now.
         */
        private void settleMissed(AsyncEvent details) {
            int status = details.getSuppliedResponse() instanceof HttpServletResponse r ? r.getStatus() : 500;
            RequestAccount.Part resource = account.unresumedResource();
            if (resource != null) {
                // A filter before the resource method's answered the request at its slot (an
                // authentication refused it), or it went elsewhere: the method never ran.
                OutcomeCounting.settle(resource.reservation(), resource.rules(), status);
            }
            RequestAccount.Part missed = account.resumeDelayed();
            if (missed != null) {
                if (UNMAPPED_LOGGED.compareAndSet(false, true)) {
                    LOG.log(System.Logger.Level.WARNING, "A request held for its slot was dispatched without "
                            + "passing the rate-limit filter again: map the filter for the ASYNC dispatcher "
                            + "type too (logged once); such a request is settled when it completes, but a "
                            + "refusal of an annotated method it calls is not answered 429 by the filter");
                }
                OutcomeCounting.settle(missed.reservation(), missed.rules(), status, ReportedCosts.of(missed.rules(),
                        details.getSuppliedRequest(), details.getSuppliedResponse()));
            }
        }

        private void complete() {
            try {
                context.complete();
            } catch (IllegalStateException e) {
                // Already completed by the container.
            }
        }
    }
}
