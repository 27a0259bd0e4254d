package dev.ratelimit.valkey.connection;

import redis.clients.jedis.Response;
import redis.clients.jedis.UnifiedJedis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Function calls of concurrent threads sent together: at most {@code inFlight} pipelines are
 * on the wire at once, and a thread that arrives while they are all busy queues its call; the
 * next free thread sends every queued call in one pipeline on one pooled connection, reads
 * the replies in order and hands each to its caller. One round trip and one pair of system
 * calls then serve many decisions, on the client and on the server.
 *
 * <p>There is no background thread: a caller either sends (it leads) or waits for the one who
 * sends its call. A call alone is sent as it is, so a quiet server sees exactly the calls it
 * saw without pipelining. Each caller gets its own reply or its own error: a script error in one
 * reply fails that call only; a broken connection, or anything else the sending thread throws
 * (an {@link Error} too), fails every call of that pipeline at once, and each caller counts it
 * with the circuit breaker as its own failure.
 *
 * <p>Waits are bounded, queued and on the wire together: a queued call's deadline is set once,
 * {@code maxWaitNanos} after it is queued. Not taken by a pipeline by then, it is withdrawn and
 * fails as not attempted; taken, its caller stops waiting then, and its pipeline (see
 * {@link DeadlinePipelines}) is over by the earliest deadline of its calls, so that the thread
 * sending it, which queued too, waits no longer than its own bound either.
 */
public final class PipelinedCalls {

    /** Most calls in one pipeline: past this the replies of the first wait for the last's. */
    static final int MAX_BATCH = 64;

    private final UnifiedJedis client;
    private final DeadlinePipelines wire;
    private final Semaphore pipelines;
    private final long maxWaitNanos;
    private final ConcurrentLinkedQueue<Call> queue = new ConcurrentLinkedQueue<>();

    /**
     * Pipelines on a client.
     *
     * @param client       the client
     * @param inFlight     the most pipelines on the wire at once
     * @param maxWaitNanos the longest a call waits for its reply before it fails
     */
    public PipelinedCalls(UnifiedJedis client, int inFlight, long maxWaitNanos) {
        this.client = client;
        this.wire = new DeadlinePipelines(client);
        this.pipelines = new Semaphore(inFlight);
        this.maxWaitNanos = maxWaitNanos;
    }

    /**
     * {@code FCALL function keys args}, maybe in a pipeline with other threads' calls.
     *
     * @return the reply
     * @throws RuntimeException the reply's error or the connection's, as Jedis threw it; a
     *                          {@link PipelineWaitException} when the call's bound passed; a
     *                          {@link PipelineFailedException} when its pipeline's sending thread
     *                          threw something else
     */
    public Object fcall(String function, List<String> keys, List<String> args) {
        // Nobody waiting and a pipeline free: the call goes out on its own, as if unpipelined.
        if (queue.isEmpty() && pipelines.tryAcquire()) {
            try {
                return client.fcall(function, keys, args);
            } finally {
                pipelines.release();
                wakeNextQueued();
            }
        }
        // Every wait of the call, queued and on the wire, ends here: set once, before queuing.
        Call call = new Call(new DeadlinePipelines.FunctionCall(function, keys, args),
                System.nanoTime() + maxWaitNanos);
        queue.add(call);
        while (!call.isDone()) {
            // Only a queued call may lead: one already taken waits for its pipeline's reply.
            if (call.isQueued() && pipelines.tryAcquire()) {
                try {
                    send();
                } finally {
                    pipelines.release();
                    wakeNextQueued();
                }
                continue;
            }
            long left = call.deadline - System.nanoTime();
            if (left <= 0) {
                if (call.withdraw()) {
                    throw new PipelineWaitException("no pipeline was free to send the call within "
                            + maxWaitNanos / 1_000_000 + " ms");
                }
                if (call.isDone()) {
                    break;
                }
                throw new PipelineWaitException("its pipeline's reply did not come within "
                        + maxWaitNanos / 1_000_000 + " ms of queuing the call");
            }
            LockSupport.parkNanos(this, left);
        }
        return call.reply();
    }

    /** Sends what is queued, up to {@link #MAX_BATCH} calls, and hands out the replies. */
    private void send() {
        // Sized first: taking calls must not allocate, or a call taken could be left unanswered.
        List<Call> batch = new ArrayList<>(MAX_BATCH);
        for (Call next; batch.size() < MAX_BATCH && (next = queue.poll()) != null; ) {
            if (next.take()) {
                batch.add(next);
            }
        }
        if (batch.isEmpty()) {
            return;
        }
        try {
            List<DeadlinePipelines.FunctionCall> calls = new ArrayList<>(batch.size());
            long deadline = batch.get(0).deadline;
            for (Call call : batch) {
                calls.add(call.call);
                if (call.deadline - deadline < 0) {
                    deadline = call.deadline;
                }
            }
            List<Response<Object>> responses = wire.send(calls, deadline);
            for (int i = 0; i < batch.size(); i++) {
                try {
                    batch.get(i).complete(responses.get(i).get(), null);
                } catch (RuntimeException e) {
                    batch.get(i).complete(null, e);
                }
            }
        } catch (RuntimeException e) {
            failAll(batch, e);
        } catch (Throwable e) {
            // An Error in this thread (out of memory, say) must not leave the batch's callers
            // waiting for replies nobody will hand them: they fail now, as on a broken
            // connection. Not thrown on: this thread's own call, if in the batch, carries it.
            failAll(batch, new PipelineFailedException("the thread sending its pipeline threw " + e, e));
        }
    }

    /** Fails every call of the batch not answered yet. */
    private static void failAll(List<Call> batch, RuntimeException failure) {
        for (Call call : batch) {
            if (!call.isDone()) {
                call.complete(null, failure);
            }
        }
    }

    /** A leader leaving lets the first queued caller lead next, rather than leading for everyone. */
    private void wakeNextQueued() {
        if (queue.isEmpty()) {
            return;
        }
        for (Call call : queue) {
            if (call.isQueued()) {
                LockSupport.unpark(call.caller);
                return;
            }
        }
    }

    /** One caller's call and, once read, its reply. */
    private static final class Call {
        private static final int QUEUED = 0;
        private static final int TAKEN = 1;
        private static final int WITHDRAWN = 2;

        final DeadlinePipelines.FunctionCall call;
        /** The {@link System#nanoTime()} by which its caller stops waiting. */
        final long deadline;
        final Thread caller = Thread.currentThread();
        private final AtomicInteger state = new AtomicInteger(QUEUED);
        private volatile boolean done;
        private Object reply;
        private RuntimeException error;

        Call(DeadlinePipelines.FunctionCall call, long deadline) {
            this.call = call;
            this.deadline = deadline;
        }

        boolean isQueued() {
            return state.get() == QUEUED;
        }

        boolean take() {
            return state.compareAndSet(QUEUED, TAKEN);
        }

        boolean withdraw() {
            return state.compareAndSet(QUEUED, WITHDRAWN);
        }

        boolean isDone() {
            return done;
        }

        void complete(Object reply, RuntimeException error) {
            this.reply = reply;
            this.error = error;
            this.done = true;
            if (caller != Thread.currentThread()) {
                LockSupport.unpark(caller);
            }
        }

        Object reply() {
            if (error != null) {
                throw error;
            }
            return reply;
        }
    }

    /** A call that waited too long for its pipeline: a failure of the store, like a read timeout. */
    static final class PipelineWaitException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        PipelineWaitException(String message) {
            super(message);
        }
    }

    /**
     * A call whose pipeline's sending thread threw what no connection throws (an
     * {@link Error}): a failure of the store, like a broken connection.
     */
    static final class PipelineFailedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        PipelineFailedException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
