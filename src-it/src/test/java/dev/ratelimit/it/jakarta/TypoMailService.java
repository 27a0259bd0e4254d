package dev.ratelimit.it.jakarta;

import dev.ratelimit.jakarta.RateLimited;
import jakarta.enterprise.context.ApplicationScoped;

/** A CDI bean whose annotation names a parameter the method does not have. */
@ApplicationScoped
public class TypoMailService {

    /**
     * Never called.
     *
     * @param account the account, not {@code accountId}
     */
    @RateLimited("reset")
    public void sendReset(long account) {
    }
}
