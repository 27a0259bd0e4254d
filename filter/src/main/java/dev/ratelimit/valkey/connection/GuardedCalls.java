package dev.ratelimit.valkey.connection;

import dev.ratelimit.Claim;
import dev.ratelimit.RateLimitException;
import dev.ratelimit.UnreadableStateException;
import dev.ratelimit.internal.Verdicts;
import redis.clients.jedis.exceptions.JedisDataException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Every call of the limiter to Valkey, through the circuit breaker, and what its reply means:
 * a failure of the server (counted by the breaker, thrown as {@link RateLimitException} with the
 * endpoint redacted), one key's unreadable state (an answer, thrown as
 * {@link UnreadableStateException} and logged once per rule), or the script's numbers.
 */
public final class GuardedCalls {

    private static final System.Logger LOG = System.getLogger(GuardedCalls.class.getName());
    /** The script's error for one unreadable state: {@code RATELIMIT_STATE <rule index> <detail>}. */
    private static final Pattern STATE_ERROR = Pattern.compile("(?:ERR )?RATELIMIT_STATE (\\d+) (.*)", Pattern.DOTALL);

    /** The longest pause between two tries of a call refused with TRYAGAIN. */
    private static final long MAX_TRY_AGAIN_PAUSE_NANOS = 20_000_000L;

    private final String endpoint;
    private final CircuitBreaker breaker;
    /** How long a call refused with TRYAGAIN is tried again; 0 on a single server. */
    private final long tryAgainNanos;
    private final Function<Claim, String> stateKey;
    /** Rules whose unreadable state was logged already: once each, not once per request. */
    private final Set<String> unreadableRules = ConcurrentHashMap.newKeySet();
    /** Whether an Error thrown by a call was logged already: once, not once per request. */
    private final AtomicBoolean errorLogged = new AtomicBoolean();

    /**
     * The guard of a limiter's calls.
     *
     * @param endpoint    what failures name
     * @param breaker     the breaker every call goes through
     * @param tryAgainFor how long a call refused with TRYAGAIN is tried again
     * @param stateKey    a claim's state key, for the errors that name it
     */
    public GuardedCalls(String endpoint, CircuitBreaker breaker, Duration tryAgainFor, Function<Claim, String> stateKey) {
        this.endpoint = endpoint;
        this.breaker = breaker;
        this.tryAgainNanos = tryAgainFor.toNanos();
        this.stateKey = stateKey;
    }

    /**
     * Runs one call to Valkey through the circuit breaker. A script error naming one claim's
     * state (see {@code dispatcher.lua}) is that key's fault, not the server's: the breaker
     * counts it as an answer. Anything else the call throws, an {@link Error} included, is a
     * failure: counted by the breaker and thrown as {@link RateLimitException}.
     */
    public <T> T run(String operation, List<Claim> claims, Supplier<T> call) {
        CircuitBreaker.Permit permit = breaker.allowCall();
        if (!permit.allowed()) {
            throw new NotAttempted(operation + " not attempted: the circuit breaker for " + endpoint
                    + " is open after repeated failures");
        }
        try {
            T result = tryingAgain(call);
            breaker.succeeded();
            return result;
        } catch (JedisDataException e) {
            Matcher state = e.getMessage() == null ? null : STATE_ERROR.matcher(e.getMessage());
            if (state != null && state.lookingAt()) {
                breaker.succeeded();
                int index = Integer.parseInt(state.group(1)) - 1;
                Claim claim = claims.get(Math.max(0, Math.min(index, claims.size() - 1)));
                throw unreadableState(claim.rule().name(), stateKey.apply(claim), state.group(2));
            }
            breaker.failed(permit);
            throw failure(operation, e);
        } catch (PipelinedCalls.PipelineFailedException e) {
            // The Error of the thread that sent this call's pipeline: logged as one, once.
            breaker.failed(permit);
            throw error(operation, e);
        } catch (RuntimeException e) {
            breaker.failed(permit);
            throw failure(operation, e);
        } catch (Throwable e) {
            // An Error (the client out of memory reading a reply, say) ends the call as surely
            // as a timeout: unreported, a probe would keep the breaker open for good. The caller
            // gets it as a failure of the store, as the RateLimiter contract says, so that a
            // request gets its rule's policy and never a 500.
            breaker.failed(permit);
            throw error(operation, e);
        }
    }

    /**
     * A cluster refuses, without running it, a call naming several keys of a slot that is being
     * migrated when some of them have moved and some not ({@code TRYAGAIN}); the migration moves
     * the rest within moments. Such a call is sent again, after pauses of 1, 2, 4 ... 20 ms,
     * until it runs or the time given at construction (the socket timeout) is spent.
     */
    private <T> T tryingAgain(Supplier<T> call) {
        long deadline = System.nanoTime() + tryAgainNanos;
        for (long pause = 1_000_000L; ; pause = Math.min(2 * pause, MAX_TRY_AGAIN_PAUSE_NANOS)) {
            try {
                return call.get();
            } catch (JedisDataException e) {
                if (e.getMessage() == null || !e.getMessage().startsWith("TRYAGAIN")
                        || System.nanoTime() + pause > deadline) {
                    throw e;
                }
            }
            LockSupport.parkNanos(pause);
            if (Thread.currentThread().isInterrupted()) {
                throw new RateLimitException("interrupted while waiting to try a call again on " + endpoint, null);
            }
        }
    }

    /** A call the breaker refused: nothing was sent, so nothing can have been taken. */
    public static final class NotAttempted extends RateLimitException {
        private static final long serialVersionUID = 1L;

        NotAttempted(String message) {
            super(message, null);
        }
    }

    private UnreadableStateException unreadableState(String rule, String key, String detail) {
        String message = "rule '" + rule + "': its state at key " + key + " cannot be read on " + endpoint + " ("
                + detail + "); delete the key or wait for its TTL";
        if (unreadableRules.add(rule)) {
            LOG.log(System.Logger.Level.WARNING, message + ". Requests on such keys get the rule's on-failure "
                    + "policy; this is logged once per rule");
        } else {
            LOG.log(System.Logger.Level.DEBUG, message);
        }
        return new UnreadableStateException(rule, message);
    }

    /** An Error is no ordinary failure of the store: its stack is logged once, the first time. */
    private RateLimitException error(String operation, Throwable e) {
        if (errorLogged.compareAndSet(false, true)) {
            LOG.log(System.Logger.Level.ERROR, operation + " on " + endpoint + " threw " + e
                    + "; counted as a failure of the store, each request gets its rule's on-failure policy "
                    + "(logged once)", e);
        } else {
            LOG.log(System.Logger.Level.DEBUG, operation + " on " + endpoint + " threw " + e);
        }
        return failure(operation, e);
    }

    private RateLimitException failure(String operation, Throwable e) {
        // Jedis messages name hosts and errors, never the password; the endpoint is redacted.
        return new RateLimitException(operation + " failed on " + endpoint + ": " + e.getClass().getSimpleName()
                + ": " + e.getMessage(), e);
    }

}
