package dev.ratelimit.it.checker;

import dev.ratelimit.jakarta.RateLimited;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * A CDI bean of the checker's app (Weld SE): one method limited by method rules {@code m0} and
 * {@code m1} as one decision, counted per its {@code caller} parameter, decided as a part of the
 * account of the request it serves ({@link HttpRequests}), its units given back when it throws
 * {@link Refused}.
 */
@ApplicationScoped
public class HttpBean {

    /** The work refused: the call's units are given back. */
    public static final class Refused extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Refused() {
            super("refused", null, false, false);
        }
    }

    /**
     * Does the work for a caller, or refuses it.
     *
     * @param caller the caller, the rules' {@code param:caller}
     * @param refuse whether to throw {@link Refused}
     * @return what was done
     */
    @RateLimited("m0")
    @RateLimited(value = "m1", giveBackOn = Refused.class)
    public String work(String caller, boolean refuse) {
        if (refuse) {
            throw new Refused();
        }
        return "done for " + caller;
    }
}
