package dev.ratelimit.it.checker;

import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.inject.Produces;
import jakarta.servlet.http.HttpServletRequest;

/**
 * The HTTP request in progress as a CDI bean, as a Jakarta EE server provides it (Weld SE has no
 * servlet module): the one the checker's resource is serving on this thread, or none. With it the
 * bean's interceptor decides as a part of the request's account.
 */
@Dependent
public class HttpRequests {

    /** The request the resource is serving on this thread. */
    static final ThreadLocal<HttpServletRequest> CURRENT = new ThreadLocal<>();

    /** A bean; the container makes it. */
    public HttpRequests() {
    }

    /**
     * The request being served on this thread.
     *
     * @return it, or null outside one
     */
    @Produces
    @Dependent
    HttpServletRequest current() {
        return CURRENT.get();
    }
}
