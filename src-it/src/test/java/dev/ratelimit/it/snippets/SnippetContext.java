package dev.ratelimit.it.snippets;

import dev.ratelimit.RateLimiter;
import dev.ratelimit.Rule;

import java.time.Duration;
import java.util.OptionalLong;

/**
 * What the documentation's Java snippets take as given (a limiter, a rule, a mailer...): each
 * snippet is compiled in a class extending this one, so a name a snippet uses without declaring
 * it is one a reader would have in scope. A name neither here nor in the snippet fails the
 * compilation, as it would fail a reader's.
 */
@SuppressWarnings("unused")
public abstract class SnippetContext {

    /** A limiter. */
    protected RateLimiter limiter;
    /** A rule of mails sent. */
    protected Rule resetMails;
    /** Rules of a user and of their tenant. */
    protected Rule perUser;
    /** A tenant's rule. */
    protected Rule perTenant;
    /** A rule's failure policy. */
    protected dev.ratelimit.FailurePolicy policy;
    /** An account's id. */
    protected long userId;
    /** Something that sends mail. */
    protected Mailer mailer;
    /** Accounts and their limits. */
    protected Accounts accounts;

    /** A rule of a tenant's tokens a day. */
    protected Rule tokensPerDay;
    /** A tenant's id. */
    protected String tenant;
    /** A language model. */
    protected Model model;
    /** What it is asked. */
    protected String prompt;

    protected java.util.concurrent.ScheduledExecutorService scheduler;
    /** The application's Micrometer registry (docs/metrics.md). */
    protected io.micrometer.core.instrument.MeterRegistry registry;
    protected Object file;

    protected void upload(Object file) {
    }

    /** A language model. */
    public interface Model {
        /**
         * Answers a prompt.
         *
         * @param prompt the prompt
         * @return the answer
         */
        Completion complete(String prompt);
    }

    /** A model's answer. */
    public interface Completion {
        /**
         * The tokens it used.
         *
         * @return the count
         */
        long tokensUsed();
    }

    /** A mail that could not be sent. */
    public static class MailException extends RuntimeException {
    }

    /** Sends mail. */
    public interface Mailer {
        /**
         * Sends one.
         *
         * @param what the mail
         */
        void send(Object what);
    }

    /** Accounts. */
    public interface Accounts {
        /**
         * An account's own limit.
         *
         * @param name the account
         * @return its limit, if it has its own
         */
        OptionalLong apiLimit(String name);
    }

    /**
     * A reset link.
     *
     * @param userId the account
     * @return the link
     */
    protected String resetLink(long userId) {
        return "";
    }

    /**
     * An answer of 429.
     *
     * @param retryAfter the wait
     * @return the answer
     */
    protected Object tooManyRequests(Duration retryAfter) {
        return retryAfter;
    }
}
