package dev.ratelimit.it.jakarta;

import dev.ratelimit.jakarta.RateLimited;
import jakarta.enterprise.context.ApplicationScoped;

/** A CDI bean on the same rule as {@link EdgeResources.Annotated}: {@code api}, for one stack under both. */
@ApplicationScoped
public class ApiService {

    /** A bean; the container makes it. */
    public ApiService() {
    }

    /**
     * Answers, one unit of {@code api}.
     *
     * @return {@code ok}
     */
    @RateLimited("api")
    public String call() {
        return "ok";
    }
}
