package dev.ratelimit.jakarta;

import dev.ratelimit.servlet.MethodDecision;
import jakarta.ws.rs.core.Response;

/**
 * The Jakarta REST response of a refused call: the filter's 429 or 503, with the same
 * {@code Retry-After}, {@code Cache-Control: no-store}, rate-limit header fields and
 * {@code application/problem+json} body.
 */
final class Refusals {

    private Refusals() {
    }

    /**
     * The response: the refusal is the request's answer, so what the request's other layers
     * took for it goes back first (and its fields say so).
     *
     * @param decision a refusing decision
     * @return its 429 or 503
     */
    static Response of(MethodDecision decision) {
        decision.answered();
        int status = decision.status().orElse(429);
        Response.ResponseBuilder response = Response.status(status)
                .header("Retry-After", Long.toString(decision.retryAfterSeconds()))
                .header("Cache-Control", "no-store")
                // As the filter's Content-Type: the servlet container adds the charset it was given.
                .type("application/problem+json;charset=UTF-8")
                .entity(decision.problem().orElse(""));
        decision.headers(status).forEach(response::header);
        return response.build();
    }
}
