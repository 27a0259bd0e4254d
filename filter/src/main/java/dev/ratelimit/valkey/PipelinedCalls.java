package dev.ratelimit.valkey;

import redis.clients.jedis.AbstractPipeline;
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
 * reply fails that call only; a broken connection fails every call of that pipeline, and each
 * caller counts it with the circuit breaker as its own failure.
 *
 * <p>Waits are bounded: a queued call that no pipeline has taken within {@code maxWaitNanos} is
 * withdrawn and fails as not attempted; a taken call fails when its pipeline's reads time out
 * (the client's socket timeout), and its caller stops waiting at {@code maxWaitNanos} even then.
 */
final class PipelinedCalls {

    /** Most calls in one pipeline: past this the replies of the first wait for the last's. */
    static final int MAX_BATCH = 64;

    private final UnifiedJedis client;
    private final Semaphore pipelines;
    private final long maxWaitNanos;
    private final ConcurrentLinkedQueue<Call> queue = new ConcurrentLinkedQueue<>();

    PipelinedCalls(UnifiedJedis client, int inFlight, long maxWaitNanos) {
        this.client = client;
        this.pipelines = new Semaphore(inFlight);
        this.maxWaitNanos = maxWaitNanos;
    }

    /**
     * {@code FCALL function keys args}, maybe in a pipeline with other threads' calls.
     *
     * @return the reply
     * @throws RuntimeException the reply's error or the connection's, as Jedis threw it
     */
    Object fcall(String function, List<String> keys, List<String> args) {
        // Nobody waiting and a pipeline free: the call goes out on its own, as if unpipelined.
        if (queue.isEmpty() && pipelines.tryAcquire()) {
            try {
                return client.fcall(function, keys, args);
            } finally {
                pipelines.release();
                wakeNextQueued();
            }
        }
        Call call = new Call(function, keys, args);
        queue.add(call);
        long deadline = System.nanoTime() + maxWaitNanos;
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
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                if (call.withdraw()) {
                    throw new PipelineWaitException("no pipeline was free to send the call within "
                            + maxWaitNanos / 1_000_000 + " ms");
                }
                if (left < -maxWaitNanos) {
                    throw new PipelineWaitException("its pipeline's reply did not come within "
                            + 2 * maxWaitNanos / 1_000_000 + " ms");
                }
            }
            LockSupport.parkNanos(this, Math.max(left > 0 ? left : left + maxWaitNanos, 100_000));
        }
        return call.reply();
    }

    /** Sends what is queued, up to {@link #MAX_BATCH} calls, and hands out the replies. */
    private void send() {
        List<Call> batch = new ArrayList<>();
        for (Call next; batch.size() < MAX_BATCH && (next = queue.poll()) != null; ) {
            if (next.take()) {
                batch.add(next);
            }
        }
        if (batch.isEmpty()) {
            return;
        }

        if (batch.size() == 1) {
            Call only = batch.get(0);
            try {
                only.complete(client.fcall(only.function, only.keys, only.args), null);
            } catch (RuntimeException e) {
                only.complete(null, e);
            }
            return;
        }
        List<Response<Object>> responses = new ArrayList<>(batch.size());
        RuntimeException broken = null;
        try (AbstractPipeline pipeline = client.pipelined()) {
            for (Call call : batch) {
                responses.add(pipeline.fcall(call.function, call.keys, call.args));
            }
            pipeline.sync();
        } catch (RuntimeException e) {
            broken = e;
        }
        for (int i = 0; i < batch.size(); i++) {
            Call call = batch.get(i);
            if (broken != null) {
                call.complete(null, broken);
                continue;
            }
            try {
                call.complete(responses.get(i).get(), null);
            } catch (RuntimeException e) {
                call.complete(null, e);
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

        final String function;
        final List<String> keys;
        final List<String> args;
        final Thread caller = Thread.currentThread();
        private final AtomicInteger state = new AtomicInteger(QUEUED);
        private volatile boolean done;
        private Object reply;
        private RuntimeException error;

        Call(String function, List<String> keys, List<String> args) {
            this.function = function;
            this.keys = keys;
            this.args = args;
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
}
