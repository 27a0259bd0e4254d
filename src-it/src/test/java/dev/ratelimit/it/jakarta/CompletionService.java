package dev.ratelimit.it.jakarta;

import dev.ratelimit.jakarta.RateLimited;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** A CDI bean in front of a language model: each call costs the tokens it returns ({@code cost-from=returned}). */
@ApplicationScoped
public class CompletionService {

    /** A bean; the container makes it. */
    public CompletionService() {
    }

    /**
     * A completion that used {@code tokens} tokens.
     *
     * @param tokens the tokens it used
     * @return the tokens it used, its cost
     */
    @RateLimited("tokens")
    public long complete(long tokens) {
        return tokens;
    }

    /**
     * A completion that runs until {@code done} completes with the tokens it used.
     *
     * @param done completes with the tokens used
     * @return the tokens used, when done
     */
    @RateLimited("tokens")
    public CompletionStage<Long> completeLater(CompletableFuture<Long> done) {
        return done.thenApply(tokens -> tokens);
    }
}
