package dev.ratelimit.it.jakarta;

import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.inject.Produces;
import jakarta.servlet.http.HttpServletRequest;

/**
 * The HTTP request in progress as a CDI bean, as a Jakarta EE server provides it (Weld SE has no
 * servlet module): the one {@link BatchResetResource} is serving on this thread, or none.
 */
@Dependent
public class CurrentRequest {

    /** A bean; the container makes it. */
    public CurrentRequest() {
    }

    /**
     * The request being served on this thread.
     *
     * @return it, or null outside one
     */
    @Produces
    @Dependent
    HttpServletRequest current() {
        return BatchResetResource.CURRENT.get();
    }
}
