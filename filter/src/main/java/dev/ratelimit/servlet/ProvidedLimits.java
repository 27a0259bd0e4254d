package dev.ratelimit.servlet;

import dev.ratelimit.Rule;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

/**
 * The application's {@link LimitProvider} behind a bounded cache and a time bound: what the
 * filter holds a caller to when the application keeps limits of its own.
 *
 * <p>What is cached is the provider's answer, the number, not a rule built from it: the answer is
 * applied at each request to the rule as it is then, so a refresh of the settings or the caller's
 * plan of the moment holds at once for a caller whose answer is cached. An answer is a number of
 * units per window, so it is cached per rule, algorithm, window and key: a plan or a refresh with
 * another window asks again.
 */
final class ProvidedLimits implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(ProvidedLimits.class.getName());

    private final LimitProvider provider;
    private final long ttlNanos;
    private final long timeoutNanos;
    private final LongSupplier clock;
    private final ThreadPoolExecutor calls;
    /** Rule, algorithm, window and key to the provider's answer and when it expires; access order for LRU. */
    private final Map<String, Answer> cache;
    /** Answers being computed, so that requests for one key while it is slow ask it once. */
    private final Map<String, CompletableFuture<OptionalLong>> pending = new java.util.concurrent.ConcurrentHashMap<>();
    private final AtomicBoolean failureLogged = new AtomicBoolean();
    private final AtomicBoolean slowLogged = new AtomicBoolean();
    private final AtomicBoolean invalidLogged = new AtomicBoolean();

    /** The provider's answer (empty: the rule's own limit) and until when it is used. */
    private static final class Answer {
        final OptionalLong limit;
        final long expiresAt;
        /**
         * The last rule and cost the answer was applied to, and the result: requests find the same
         * rule until the settings change, and need not build it again. A race only builds it twice.
         */
        volatile Applied applied;

        Answer(OptionalLong limit, long expiresAt) {
            this.limit = limit;
            this.expiresAt = expiresAt;
        }
    }

    private record Applied(Rule base, long cost, Rule result) {
    }

    ProvidedLimits(LimitProvider provider, Duration ttl, int cacheSize, Duration timeout, LongSupplier nanoClock) {
        this.provider = provider;
        this.ttlNanos = ttl.toNanos();
        this.timeoutNanos = timeout.toNanos();
        this.clock = nanoClock;
        this.cache = new LinkedHashMap<>(16, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Answer> eldest) {
                return size() > cacheSize;
            }
        };
        // A few threads so that one slow answer does not hold the others up; past the queue,
        // callers get the configured limit at once.
        this.calls = new ThreadPoolExecutor(1, 4, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(256), task -> {
            Thread thread = new Thread(task, "ratelimit-limit-provider");
            thread.setDaemon(true);
            return thread;
        }, new ThreadPoolExecutor.AbortPolicy());
    }

    /**
     * The rule a caller is held to: the provider's limit for it, cached, applied to the rule; or
     * the rule itself.
     *
     * @param rule      the configured rule (or the caller's plan's), as the settings have it now
     * @param key       the claim's key
     * @param principal the request's principal, or null
     * @param cost      units each request of the rule takes: an answer that cannot take them is
     *                  one the rule cannot take
     * @return the rule to apply
     */
    Rule apply(Rule rule, String key, java.security.Principal principal, long cost) {
        String cacheKey = rule.name() + ' ' + rule.algorithm().id() + ' ' + rule.window().toMillis() + ' ' + rule.calendar() + ' ' + key;
        long now = clock.getAsLong();
        Answer cached;
        synchronized (cache) {
            cached = cache.get(cacheKey);
        }
        if (cached != null && now - cached.expiresAt < 0) {
            Applied applied = cached.applied;
            if (applied == null || applied.base() != rule || applied.cost() != cost) {
                applied = new Applied(rule, cost, ruleFor(rule, cached.limit, cost));
                cached.applied = applied;
            }
            return applied.result();
        }
        return ruleFor(rule, ask(rule, key, principal, cacheKey), cost);
    }

    /** Asks the provider (once per cache key at a time), waiting at most the timeout; empty when it does not answer. */
    private OptionalLong ask(Rule rule, String key, java.security.Principal principal, String cacheKey) {
        CompletableFuture<OptionalLong> answer;
        try {
            List<CompletableFuture<OptionalLong>> created = new ArrayList<>(1);
            answer = pending.computeIfAbsent(cacheKey, k -> {
                CompletableFuture<OptionalLong> asked = CompletableFuture.supplyAsync(() -> {
                    OptionalLong limit = provider.limit(rule, key, principal);
                    return limit == null ? OptionalLong.empty() : limit;
                }, calls);
                created.add(asked);
                return asked;
            });
            // Outside computeIfAbsent: a quick answer completes its callback at once, on this thread.
            if (!created.isEmpty()) {
                answer.whenComplete((answered, failure) -> {
                    synchronized (cache) {
                        // A failing provider is not asked again for this key until the answer would
                        // expire: the rule's own limit meanwhile.
                        cache.put(cacheKey, new Answer(answered != null ? answered : OptionalLong.empty(),
                                clock.getAsLong() + ttlNanos));
                    }
                    pending.remove(cacheKey, answer);
                });
            }
        } catch (java.util.concurrent.RejectedExecutionException e) {
            logOnce(slowLogged, "The application's LimitProvider is too slow to keep up; callers get the configured "
                    + "limits meanwhile (logged once)");
            return OptionalLong.empty();
        }
        try {
            return answer.get(timeoutNanos, TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            logOnce(slowLogged, "The application's LimitProvider took longer than " + Duration.ofNanos(timeoutNanos)
                    .toMillis() + " ms; callers get the configured limits until it answers (logged once)");
            return OptionalLong.empty();
        } catch (java.util.concurrent.ExecutionException e) {
            logOnce(failureLogged, "The application's LimitProvider failed; callers get the configured limits "
                    + "(logged once): " + e.getCause());
            return OptionalLong.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return OptionalLong.empty();
        }
    }

    /**
     * The rule with the provider's limit; the rule itself for no answer or one it cannot take: an
     * invalid limit, or one whose capacity is below the request's cost, which could never be
     * allowed (and would fail the claim).
     */
    private Rule ruleFor(Rule rule, OptionalLong limit, long cost) {
        if (limit.isEmpty() || limit.getAsLong() == rule.limit()) {
            return rule;
        }
        long units = limit.getAsLong();
        try {
            long burst = !rule.algorithm().hasBurst() ? units
                    : Math.max(1, (long) Math.ceil((double) rule.burst() * units / rule.limit()));
            Rule provided = rule.toBuilder().limit(units).burst(burst).build();
            provided.checkCost(cost);
            return provided;
        } catch (IllegalArgumentException e) {
            logOnce(invalidLogged, "The application's LimitProvider answered a limit of " + units + " for rule '"
                    + rule.name() + "', which it cannot take (" + e.getMessage() + "); the configured limit (or plan) "
                    + "applies (logged once)");
            return rule;
        }
    }

    private static void logOnce(AtomicBoolean logged, String message) {
        if (logged.compareAndSet(false, true)) {
            LOG.log(System.Logger.Level.WARNING, message);
        }
    }

    @Override
    public void close() {
        calls.shutdownNow();
    }
}
