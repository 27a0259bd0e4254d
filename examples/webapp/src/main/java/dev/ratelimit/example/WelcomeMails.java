package dev.ratelimit.example;

import dev.ratelimit.jakarta.RateLimited;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * A CDI bean method limited by its argument: two welcome mails an hour per address, by rule
 * {@code welcome} of {@code META-INF/microprofile-config.properties} (its key
 * {@code param:address} is this method's parameter, by the name the compiler keeps with
 * {@code -parameters}). Whoever calls it, a resource, a timer or a message, is held to it.
 */
@ApplicationScoped
public class WelcomeMails {

    /**
     * Queues a welcome mail (here: only says so).
     *
     * @param address where the mail goes, and what the limit counts per
     * @return what was done
     */
    @RateLimited("welcome")
    public String send(String address) {
        return "welcome mail queued for " + address + "\n";
    }
}
