package dev.ratelimit.it.jakarta;

import dev.ratelimit.jakarta.RateLimitedExtension;
import dev.ratelimit.jakarta.RateLimitedInterceptor;
import dev.ratelimit.jakarta.RateLimitedListInterceptor;
import dev.ratelimit.jakarta.RateLimitedMethods;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Initialized;
import org.jboss.weld.environment.se.Weld;
import org.jboss.weld.environment.se.WeldContainer;

/** {@link Welds} for an {@link JakartaApp}. */
final class LayeredWelds {

    private LayeredWelds() {
    }

    static WeldContainer weld(JakartaApp app, Class<?>... beans) throws Exception {
        WeldContainer weld = new Weld("layered-" + System.nanoTime()).disableDiscovery()
                .addExtension(new RateLimitedExtension())
                .addBeanClasses(RateLimitedMethods.class, RateLimitedInterceptor.class, RateLimitedListInterceptor.class)
                .addBeanClasses(beans).initialize();
        try {
            app.inApp(() -> {
                weld.getBeanManager().getEvent().select(Initialized.Literal.of(ApplicationScoped.class))
                        .fire(app.servletContext());
                return null;
            });
            return weld;
        } catch (Exception | Error e) {
            weld.shutdown();
            throw e;
        }
    }
}
