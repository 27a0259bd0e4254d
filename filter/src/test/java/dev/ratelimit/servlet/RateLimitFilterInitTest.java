package dev.ratelimit.servlet;

import jakarta.servlet.ServletException;
import org.junit.jupiter.api.Test;

import java.net.URL;
import java.net.URLClassLoader;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Start-up failures a deployer must be able to understand from the message alone. */
class RateLimitFilterInitTest {

    @Test
    void withoutAMicroProfileConfigImplementationInitSaysWhatToAdd() {
        // This module's test class path has the MicroProfile Config API but no implementation.
        ClassLoader previous = Thread.currentThread().getContextClassLoader();
        Thread.currentThread().setContextClassLoader(new URLClassLoader(new URL[0], previous));
        try {
            assertThatThrownBy(() -> new RateLimitFilter().init(null))
                    .isInstanceOf(ServletException.class)
                    .hasMessageContaining("no MicroProfile Config implementation")
                    .hasMessageContaining("smallrye-config");
        } finally {
            Thread.currentThread().setContextClassLoader(previous);
        }
    }
}
