package dev.ratelimit.jakarta;

import jakarta.annotation.Priority;
import jakarta.inject.Inject;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;

/**
 * Decides each call of a CDI method with several {@link RateLimited}, which the compiler wraps
 * in one {@link RateLimited.List}: one all-or-nothing decision on all its rules. Where a
 * container binds both interceptors to one method, the call is still decided once.
 */
@RateLimited.List({})
@Interceptor
@Priority(Interceptor.Priority.LIBRARY_BEFORE + 100)
public class RateLimitedListInterceptor {

    @Inject
    RateLimitedMethods methods;

    /** An interceptor; the container makes it. */
    public RateLimitedListInterceptor() {
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
