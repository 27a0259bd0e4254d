package dev.ratelimit.it.jakarta;

import dev.ratelimit.it.ValkeyExtension;
import dev.ratelimit.it.ValkeyServer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client that gives up on an annotated resource method while it runs, on Jersey, Jetty 12 and a
 * real Valkey: the method's {@code concurrency} lease is released when the method ends, as the
 * filter releases it, not held until its {@code permit-timeout}; the first such call also starts
 * the limits.
 */
@ExtendWith(ValkeyExtension.class)
class AnnotationAbortTest {

    private final ValkeyServer valkey;

    AnnotationAbortTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.flushAll();
    }

    @Test
    void aClientGoneBeforeTheAnswerReleasesTheLeaseWhenTheMethodEnds() throws Exception {
        Map<String, String> settings = JakartaApp.settings(valkey.url(), "ratelimit.rules", "exports",
                "ratelimit.rule.exports.algorithm", "concurrency", "ratelimit.rule.exports.scope", "method",
                "ratelimit.rule.exports.limit", "1",
                "ratelimit.rule.exports.key", "global",
                // The timeout's name before 1.0, still read: the old name works under the annotations too.
                "ratelimit.rule.exports.lease-timeout", "60s");
        for (boolean withFilter : new boolean[] {false, true}) {
            valkey.flushAll();
            SlowResource.entered = new CountDownLatch(1);
            SlowResource.release = new CountDownLatch(1);
            try (JakartaApp app = JakartaApp.start(settings, withFilter, SlowResource.class)) {
                try (Socket client = new Socket("127.0.0.1", app.uri("/").getPort())) {
                    OutputStream out = client.getOutputStream();
                    out.write("GET /slow HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    assertThat(SlowResource.entered.await(10, TimeUnit.SECONDS)).as("filter " + withFilter).isTrue();
                    assertThat(app.get("/slow").statusCode()).as("filter " + withFilter + ": one at a time")
                            .isEqualTo(429);
                }
                // The client is gone; the method ends now, its answer written to no one.
                SlowResource.release.countDown();
                int status = 0;
                for (int i = 0; i < 50 && status != 200; i++) {
                    status = app.get("/slow").statusCode();
                    if (status != 200) {
                        Thread.sleep(100);
                    }
                }
                assertThat(status).as("filter " + withFilter + ": the lease released after the method ended")
                        .isEqualTo(200);
            }
        }
    }
}
