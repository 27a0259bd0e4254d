package dev.ratelimit.it.jakarta;

import dev.ratelimit.jakarta.RateLimited;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** A CDI bean running reports in the background: one at a time ({@code concurrency} rule {@code exports}). */
@ApplicationScoped
public class ReportService {

    /** A bean; the container makes it. */
    public ReportService() {
    }

    /**
     * Starts a report that runs until {@code done} completes.
     *
     * @param done completes the report
     * @return the report, when done
     */
    @RateLimited("exports")
    public CompletionStage<String> run(CompletableFuture<String> done) {
        return done.thenApply(value -> "report " + value);
    }
}
