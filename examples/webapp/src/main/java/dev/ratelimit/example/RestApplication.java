package dev.ratelimit.example;

import dev.ratelimit.jakarta.RateLimitExceededMapper;
import dev.ratelimit.jakarta.RateLimitedFeature;
import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.core.Application;

import java.util.Set;

/** The example's Jakarta REST resources under {@code /rest}, with the annotation's feature. */
@ApplicationPath("/rest")
public class RestApplication extends Application {

    @Override
    public Set<Class<?>> getClasses() {
        return Set.of(GreetingResource.class, WelcomeResource.class, RateLimitedFeature.class, RateLimitExceededMapper.class);
    }
}
