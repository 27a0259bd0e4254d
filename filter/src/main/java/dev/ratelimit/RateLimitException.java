package dev.ratelimit;

/**
 * The limiter could not decide: its store did not answer in time or answered with an error.
 * The message never contains credentials.
 */
public class RateLimitException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * An exception with a message and its cause.
     *
     * @param message what failed, without credentials
     * @param cause   the underlying failure
     */
    public RateLimitException(String message, Throwable cause) {
        super(message, cause);
    }
}
