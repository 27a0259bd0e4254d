package dev.ratelimit.it.jakarta;

import dev.ratelimit.it.ValkeyExtension;
import dev.ratelimit.it.ValkeyServer;
import dev.ratelimit.jakarta.RateLimitExceededException;
import dev.ratelimit.jakarta.RateLimitedExtension;
import dev.ratelimit.jakarta.RateLimitedInterceptor;
import dev.ratelimit.jakarta.RateLimitedListInterceptor;
import dev.ratelimit.jakarta.RateLimitedMethods;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Initialized;
import org.jboss.weld.environment.se.Weld;
import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The life of {@code @RateLimited}'s stack against a real Valkey: an application stopped leaves no
 * MBean and no Valkey connection behind, with or without the filter; and a CDI method's
 * {@code concurrency} lease lasts as long as the work it returns.
 */
@ExtendWith(ValkeyExtension.class)
class AnnotationLifecycleTest {

    private final ValkeyServer valkey;

    AnnotationLifecycleTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    private Map<String, String> settings() {
        return JakartaApp.settings(valkey.url(), "ratelimit.rules", "api,exports",
                "ratelimit.rule.api.scope", "method",
                "ratelimit.rule.api.limit", "5", "ratelimit.rule.api.window", "1h",
                "ratelimit.rule.api.key", "global",
                "ratelimit.rule.exports.algorithm", "concurrency", "ratelimit.rule.exports.scope", "method",
                "ratelimit.rule.exports.limit", "1",
                "ratelimit.rule.exports.key", "global");
    }

    private long clients() {
        try (var jedis = valkey.connect()) {
            return jedis.clientList().lines().count() - 1;
        }
    }

    private static int mbeans() throws Exception {
        return ManagementFactory.getPlatformMBeanServer()
                .queryNames(new ObjectName("dev.ratelimit:type=RateLimiter,rule=api,*"), null).size();
    }

    @Test
    void aStoppedApplicationLeavesNoMBeanNorConnection() throws Exception {
        long before = clients();
        int beansBefore = mbeans();
        for (boolean withFilter : new boolean[] {false, true, false}) {
            try (JakartaApp app = JakartaApp.start(settings(), withFilter, EdgeResources.Annotated.class)) {
                assertThat(app.get("/p").statusCode()).as("filter " + withFilter).isEqualTo(200);
                assertThat(mbeans()).as("filter " + withFilter).isEqualTo(beansBefore + 1);
            }
            assertThat(mbeans()).as("filter " + withFilter).isEqualTo(beansBefore);
            assertThat(LazyStartTest.clientsOnceAtMost(valkey, before)).as("filter " + withFilter)
                    .isLessThanOrEqualTo(before);
        }
    }

    @Test
    void aCdiMethodsLeaseLastsAsLongAsTheWorkItReturns() throws Exception {
        try (JakartaApp app = JakartaApp.start(settings(), false);
             WeldContainer weld = new Weld("ratelimit-" + System.nanoTime()).disableDiscovery()
                     .addExtension(new RateLimitedExtension())
                     .addBeanClasses(RateLimitedMethods.class, RateLimitedInterceptor.class,
                             RateLimitedListInterceptor.class, ReportService.class).initialize()) {
            app.inApp(() -> {
                weld.getBeanManager().getEvent().select(Initialized.Literal.of(ApplicationScoped.class))
                        .fire(app.servletContext());
                return null;
            });
            ReportService reports = weld.select(ReportService.class).get();
            CompletableFuture<String> first = new CompletableFuture<>();
            CompletionStage<String> running = reports.run(first);
            // One report at a time: the first is still running.
            assertThatThrownBy(() -> reports.run(new CompletableFuture<>()))
                    .isInstanceOf(RateLimitExceededException.class);
            first.complete("1");
            assertThat(running.toCompletableFuture().get()).isEqualTo("report 1");
            CompletableFuture<String> second = new CompletableFuture<>();
            CompletionStage<String> next = reports.run(second);
            second.complete("2");
            assertThat(next.toCompletableFuture().get()).isEqualTo("report 2");
        }
    }
}
