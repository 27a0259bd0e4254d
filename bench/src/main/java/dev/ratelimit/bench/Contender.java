package dev.ratelimit.bench;

/**
 * One limiter under test: a token bucket of {@code capacity} tokens refilled over
 * {@code refill}, asked for one token per call.
 */
interface Contender extends AutoCloseable {

    /** The name in the report. */
    String name();

    /**
     * Takes one token for the key.
     *
     * @param key the key
     * @return whether it was allowed
     */
    boolean tryAcquire(String key);

    @Override
    void close();
}
