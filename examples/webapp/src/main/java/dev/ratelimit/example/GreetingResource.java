package dev.ratelimit.example;

import dev.ratelimit.jakarta.RateLimited;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

/**
 * A Jakarta REST method limited by its argument: three greetings a minute per name, by rule
 * {@code greet} of {@code META-INF/microprofile-config.properties} (its key {@code param:name}
 * is this method's {@code @PathParam}). Served where the server has Jakarta REST and CDI
 * (WildFly, Open Liberty, Payara); plain Jetty and Tomcat leave it aside.
 */
@Path("greet/{name}")
public class GreetingResource {

    /**
     * A greeting.
     *
     * @param name who is greeted, and what the limit counts per
     * @return the greeting
     */
    @GET
    @Produces(MediaType.TEXT_PLAIN)
    @RateLimited("greet")
    public String greet(@PathParam("name") String name) {
        return "hello, " + name + "\n";
    }
}
