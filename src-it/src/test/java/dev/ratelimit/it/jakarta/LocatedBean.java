package dev.ratelimit.it.jakarta;

import dev.ratelimit.jakarta.RateLimited;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.GET;

/**
 * A CDI bean that is also a Jakarta REST sub-resource: a locator returns its client proxy, so
 * Jakarta REST names its method by the proxy's override and the interceptor by the bean's.
 */
@ApplicationScoped
public class LocatedBean {

    /** A bean; the container makes it. */
    public LocatedBean() {
    }

    /**
     * Answers.
     *
     * @return a text
     */
    @GET
    @RateLimited("located")
    public String run() {
        return "located ran";
    }
}
