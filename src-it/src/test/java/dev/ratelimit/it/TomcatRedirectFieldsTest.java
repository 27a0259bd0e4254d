package dev.ratelimit.it;

import dev.ratelimit.servlet.RateLimitFilter;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.eclipse.microprofile.config.spi.ConfigProviderResolver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fields stay off 3xx responses on Tomcat 11 (Servlet 6.1) too, whichever
 * {@code sendRedirect} the application calls: 6.1 added {@code sendRedirect(location, status)},
 * {@code sendRedirect(location, clearBuffer)} and {@code sendRedirect(location, status,
 * clearBuffer)}, and a response wrapper that does not see them passes them straight to the
 * container. They are called by reflection: this module compiles against Servlet 6.0.
 */
@ExtendWith(ValkeyExtension.class)
class TomcatRedirectFieldsTest {

    private final ValkeyServer valkey;

    TomcatRedirectFieldsTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @Test
    void noFieldsOnAServlet61Redirection() throws Exception {
        // Promise 5: 3xx responses carry no rate-limit fields by default (every sendRedirect).
        valkey.flushAll();
        Map<String, String> settings = JettyApp.settings(valkey.url(), "ratelimit.rules", "all",
                "ratelimit.rule.all.algorithm", "sliding-log", "ratelimit.rule.all.limit", "100",
                "ratelimit.rule.all.window", "1h", "ratelimit.headers", "both");
        AtomicReference<ClassLoader> configured = new AtomicReference<>();
        Tomcat tomcat = new Tomcat();
        Path base = Files.createTempDirectory("tomcat");
        tomcat.setBaseDir(base.toString());
        Connector connector = new Connector();
        connector.setPort(0);
        connector.setProperty("address", "127.0.0.1");
        tomcat.setConnector(connector);
        Context context = tomcat.addContext("", base.toString());
        // The application's MicroProfile Config, registered for its class loader before the filter starts.
        context.addServletContainerInitializer((classes, servletContext) -> {
            configured.set(servletContext.getClassLoader());
            ConfigProviderResolver.instance().registerConfig(new SmallRyeConfigBuilder()
                    .withSources(new PropertiesConfigSource(settings, "test", 100)).build(), servletContext.getClassLoader());
        }, null);
        FilterDef filter = new FilterDef();
        filter.setFilterName("rate-limit");
        filter.setFilterClass(RateLimitFilter.class.getName());
        filter.setAsyncSupported("true");
        context.addFilterDef(filter);
        FilterMap mapping = new FilterMap();
        mapping.setFilterName("rate-limit");
        mapping.addURLPattern("/*");
        context.addFilterMap(mapping);
        Tomcat.addServlet(context, "redirect", new Servlet61Redirects());
        context.addServletMappingDecoded("/redirect", "redirect");
        try {
            tomcat.start();
            String root = "http://127.0.0.1:" + connector.getLocalPort();
            HttpResponse<String> plain = get(root + "/redirect?how=send");
            assertThat(plain.statusCode()).isEqualTo(302);
            assertThat(ClientFields.rateLimitFieldNames(plain)).as("sendRedirect(location)").isEmpty();
            for (String how : List.of("status", "buffer", "both")) {
                HttpResponse<String> response = get(root + "/redirect?how=" + how);
                assertThat(response.statusCode()).as(how).isBetween(300, 399);
                assertThat(response.headers().firstValue("Location")).as(how).isPresent();
                assertThat(ClientFields.rateLimitFieldNames(response)).as("fields of the %s by the Servlet 6.1 "
                        + "sendRedirect (%s)", response.statusCode(), how).isEmpty();
            }
        } finally {
            tomcat.stop();
            tomcat.destroy();
            if (configured.get() != null) {
                ConfigProviderResolver.instance().releaseConfig(ConfigProviderResolver.instance()
                        .getConfig(configured.get()));
            }
        }
    }

    private static HttpResponse<String> get(String uri) throws Exception {
        return JettyApp.HTTP.send(HttpRequest.newBuilder(URI.create(uri)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** Redirects with the overloads Servlet 6.1 added: {@code how=status}, {@code buffer}, {@code both}. */
    static final class Servlet61Redirects extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
            try {
                switch (request.getParameter("how")) {
                    case "send" -> response.sendRedirect("/");
                    case "status" -> HttpServletResponse.class.getMethod("sendRedirect", String.class, int.class)
                            .invoke(response, "/", 301);
                    case "buffer" -> HttpServletResponse.class.getMethod("sendRedirect", String.class, boolean.class)
                            .invoke(response, "/", false);
                    case "both" -> HttpServletResponse.class.getMethod("sendRedirect", String.class, int.class,
                            boolean.class).invoke(response, "/", 307, true);
                    default -> throw new IllegalArgumentException(request.getParameter("how"));
                }
            } catch (NoSuchMethodException | IllegalAccessException e) {
                throw new IllegalStateException("Servlet 6.1 expected on Tomcat 11", e);
            } catch (InvocationTargetException e) {
                throw new IOException(e.getCause());
            }
        }
    }
}
