package dev.ratelimit.jakarta;

import jakarta.annotation.Priority;
import jakarta.inject.Inject;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;

/**
 * Decides each call of a CDI method with one {@link RateLimited} before it runs (see
 * {@link RateLimitedMethods}). Enabled for the whole application by its priority, early among
 * the libraries' interceptors: a refused call does no other interceptor's work.
 */
@RateLimited("")
@Interceptor
@Priority(Interceptor.Priority.LIBRARY_BEFORE + 100)
public class RateLimitedInterceptor {

    @Inject
    RateLimitedMethods methods;

    /** An interceptor; the container makes it. */
    public RateLimitedInterceptor() {
    }

    /**
     * Decides the call, then runs it.
     *
     * @param call the call
     * @return what the method returned
     * @throws Exception what the method threw, or {@link RateLimitExceededException}
     */
    @AroundInvoke
    public Object decide(InvocationContext call) throws Exception {
        return methods.call(call);
    }
}
