package dev.ratelimit.it.jakarta;

import dev.ratelimit.jakarta.RateLimited;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A CDI bean sending mails: three reset mails per account ({@code ratelimit.rule.reset.key=param:accountId}). */
@ApplicationScoped
public class MailService {

    private final List<String> sent = new CopyOnWriteArrayList<>();

    /**
     * The mails sent (a method: the container's proxy has no state of its own).
     *
     * @return {@code kind:account} for each, in order
     */
    public List<String> sent() {
        return List.copyOf(sent);
    }

    /**
     * Sends a password reset mail.
     *
     * @param accountId the account
     */
    @RateLimited("reset")
    public void sendReset(long accountId) {
        sent.add("reset:" + accountId);
    }

    /**
     * Sends a reset mail unless the mail server refuses it; a refused one does not count.
     *
     * @param accountId the account
     * @param refused   whether the mail server refuses it
     */
    @RateLimited(value = "reset", giveBackOn = MailRefused.class)
    public void sendResetUnlessRefused(long accountId, boolean refused) {
        if (refused) {
            throw new MailRefused();
        }
        sent.add("reset:" + accountId);
    }

    /**
     * Sends a newsletter to an account: three per account and four in all, one decision.
     *
     * @param accountId the account
     */
    @RateLimited("reset")
    @RateLimited("daily")
    public void sendNewsletter(long accountId) {
        sent.add("newsletter:" + accountId);
    }

    /**
     * Sends a welcome mail: once per account, by the parameter's position
     * ({@code ratelimit.rule.welcome.key=param:0}).
     *
     * @param account the account
     */
    @RateLimited("welcome")
    public void sendWelcome(long account) {
        sent.add("welcome:" + account);
    }

    /** The mail server refused a mail. */
    public static class MailRefused extends RuntimeException {
        private static final long serialVersionUID = 1L;
    }
}
