package dev.ratelimit.jakarta;

import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import jakarta.ws.rs.ext.Provider;

/**
 * Answers a {@link RateLimitExceededException} thrown under a Jakarta REST request (a CDI method
 * called by a resource method, or a resource method that is a CDI bean) as the filter would:
 * 429 or 503, {@code Retry-After}, the rate-limit fields and the problem body.
 */
@Provider
public class RateLimitExceededMapper implements ExceptionMapper<RateLimitExceededException> {

    /** A mapper; Jakarta REST makes it. */
    public RateLimitExceededMapper() {
    }

    @Override
    public Response toResponse(RateLimitExceededException exception) {
        return Refusals.of(exception.decision());
    }
}
