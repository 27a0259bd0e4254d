package dev.ratelimit.it;

import dev.ratelimit.RateLimitListener;
import dev.ratelimit.it.DelayHttpTest.App;
import dev.ratelimit.it.DelayHttpTest.AppFilter;
import dev.ratelimit.it.DelayHttpTest.Container;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A 429 is whole, with its length and never chunked, on Jetty and Tomcat, whatever a filter of
 * the application's before the limiter did to the response: a buffer smaller than the body, a
 * length set, the writer taken, bytes left unflushed in the buffer, fields of its own content, a
 * locale, trailers, a transfer coding.
 */
@ExtendWith(ValkeyExtension.class)
class RefusalBodyTest {

    private final ValkeyServer valkey;

    RefusalBodyTest(ValkeyServer valkey) {
        this.valkey = valkey;
    }

    @BeforeEach
    void empty() {
        valkey.start();
        valkey.flushAll();
    }

    /** Does to the response what the request's {@code X-Pre} header says, then passes it on. */
    private static final Filter BEFORE = (request, response, chain) -> {
        HttpServletResponse http = (HttpServletResponse) response;
        String pre = ((HttpServletRequest) request).getHeader("X-Pre");
        switch (pre == null ? "" : pre) {
            case "small-buffer" -> http.setBufferSize(16);
            case "length" -> http.setContentLength(5);
            case "writer" -> http.getWriter();
            case "unflushed" -> http.getOutputStream().write("PRE".getBytes(StandardCharsets.US_ASCII));
            case "utf16-writer" -> {
                http.setCharacterEncoding("UTF-16");
                http.getWriter();
                http.setBufferSize(0);
            }
            case "own-content" -> {
                http.setHeader("Content-Encoding", "gzip");
                http.setHeader("Content-Disposition", "attachment; filename=report.pdf");
                http.setHeader("ETag", "\"v1\"");
            }
            // Tomcat keeps a locale's language apart from the fields.
            case "locale" -> http.setLocale(java.util.Locale.FRANCE);
            case "trailers" -> http.setTrailerFields(() -> Map.of("X-Trailer", "1"));
            case "chunked" -> http.setHeader("transfer-encoding", "chunked");
            case "gzip" -> {
                // A compressing wrapper: its Content-Encoding is the answer's own, whoever writes it.
                http.setHeader("Content-Encoding", "gzip");
                Gzip gzip = new Gzip(http);
                try {
                    chain.doFilter(request, gzip);
                } finally {
                    gzip.finish();
                }
                return;
            }
            case "wrapped-writer" -> {
                // A wrapper that passes the container's writer on, taken: the encoding is not its.
                http.setHeader("Content-Encoding", "gzip");
                HttpServletResponseWrapper plain = new HttpServletResponseWrapper(http);
                plain.getWriter();
                chain.doFilter(request, plain);
                return;
            }
            case "strict-wrapper" -> {
                // A wrapper that takes no null value: what it keeps, it keeps, and no 500.
                http.setHeader("ETag", "\"v1\"");
                chain.doFilter(request, new HttpServletResponseWrapper(http) {
                    @Override
                    public void setHeader(String name, String value) {
                        super.setHeader(name, java.util.Objects.requireNonNull(value, "value"));
                    }
                });
                return;
            }
            default -> {
            }
        }
        chain.doFilter(request, response);
    };

    @ParameterizedTest
    @EnumSource(Container.class)
    void a429IsWholeWhateverAFilterBeforeDidToTheResponse(Container container) throws Exception {
        Map<String, String> settings = JettyApp.settings(valkey.url(), "ratelimit.rules", "api",
                "ratelimit.rule.api.algorithm", "fixed-window", "ratelimit.rule.api.limit", "1",
                "ratelimit.rule.api.window", "1h", "ratelimit.rule.api.key", "header:X-Caller");
        try (App app = App.start(container, settings, RateLimitListener.NONE, EnumSet.allOf(DispatcherType.class),
                Map.of(), List.of(new AppFilter("before", BEFORE, EnumSet.of(DispatcherType.REQUEST), false)))) {
            for (String pre : List.of("none", "small-buffer", "length", "writer", "unflushed", "utf16-writer",
                    "own-content", "locale", "trailers", "chunked", "gzip", "wrapped-writer", "strict-wrapper")) {
                assertThat(send(app, pre, "none").statusCode()).as(pre).isEqualTo(200);
                HttpResponse<byte[]> raw = sendBytes(app, pre, pre);
                assertThat(raw.statusCode()).as(pre).isEqualTo(429);
                if (pre.equals("trailers")) {
                    // Trailers go only in chunks: the earlier filter's dropped, the last chunk empty.
                    assertThat(raw.headers().firstValue("Transfer-Encoding")).as(pre).hasValue("chunked");
                    assertThat(onTheWire(app.uri("/run"), pre)).as("what the client reads, trailers too")
                            .startsWith("HTTP/1.1 429").doesNotContainIgnoringCase("X-Trailer")
                            .endsWith("\r\n0\r\n\r\n");
                } else {
                    assertThat(raw.headers().firstValue("Content-Length")).as(pre)
                            .hasValue(Integer.toString(raw.body().length));
                    assertThat(raw.headers().firstValue("Transfer-Encoding")).as(pre).isEmpty();
                }
                // Read in the charset the answer names (UTF-8, or a writer's taken before).
                String charset = raw.headers().firstValue("Content-Type").orElseThrow().replaceAll(".*charset=", "");
                byte[] bytes = raw.body();
                if (pre.equals("gzip")) {
                    assertThat(raw.headers().firstValue("Content-Encoding")).as(pre).hasValue("gzip");
                    bytes = new java.util.zip.GZIPInputStream(new java.io.ByteArrayInputStream(bytes)).readAllBytes();
                }
                String text = new String(bytes, java.nio.charset.Charset.forName(charset));
                assertThat(text).as(pre).startsWith("{\"type\":").endsWith("}")
                        .contains("\"rule\":\"api\"");
                assertThat(raw.headers().map().keySet()).as(pre)
                        .noneMatch(name -> (name.equalsIgnoreCase("Content-Encoding") && !pre.equals("gzip"))
                                || (name.equalsIgnoreCase("ETag") && !pre.equals("strict-wrapper"))
                                || name.equalsIgnoreCase("Content-Disposition") || name.equalsIgnoreCase("Content-Language"));
                assertThat(raw.headers().firstValue("Content-Type")).as(pre)
                        .hasValueSatisfying(type -> assertThat(type).startsWith("application/problem+json"));
            }
        }
    }

    /** A resource method under its own rule: the refusal is written by Jakarta REST, not by the filter. */
    @jakarta.ws.rs.Path("m")
    public static class Limited {
        /** @return a constant */
        @jakarta.ws.rs.GET
        @dev.ratelimit.jakarta.RateLimited("m")
        public String get() {
            return "ok";
        }
    }

    /**
     * An annotated method's refusal, which Jakarta REST writes on the response the filter got,
     * is as whole and its own as the filter's: nothing an earlier filter wrote or said of its own
     * content, and its length.
     */
    @ParameterizedTest
    @EnumSource(Container.class)
    void aMethodsRefusalIsWholeWhateverAFilterBeforeDid(Container container) throws Exception {
        Map<String, String> settings = JettyApp.settings(valkey.url(), "ratelimit.rules", "m",
                "ratelimit.rule.m.scope", "method", "ratelimit.rule.m.limit", "1", "ratelimit.rule.m.window", "1h",
                "ratelimit.rule.m.key", "header:X-Caller");
        Map<String, jakarta.servlet.http.HttpServlet> servlets = Map.of("/api/*",
                new org.glassfish.jersey.servlet.ServletContainer(new org.glassfish.jersey.server.ResourceConfig(
                        dev.ratelimit.jakarta.RateLimitedFeature.class,
                        dev.ratelimit.jakarta.RateLimitExceededMapper.class, Limited.class)));
        try (App app = App.start(container, settings, RateLimitListener.NONE, EnumSet.allOf(DispatcherType.class),
                servlets, List.of(new AppFilter("before", BEFORE, EnumSet.of(DispatcherType.REQUEST), false)))) {
            for (String pre : List.of("none", "unflushed", "own-content", "locale", "chunked", "strict-wrapper")) {
                if (pre.equals("unflushed") && container == Container.JETTY) {
                    continue; // Jersey on Jetty answers 500 to a stream an earlier filter wrote to, limited or not
                }
                String caller = container + "-" + pre;
                HttpResponse<byte[]> first = get(app, "/api/m", caller, pre);
                assertThat(first.statusCode()).as(pre).isEqualTo(200);
                HttpResponse<byte[]> raw = get(app, "/api/m", caller, pre);
                assertThat(raw.statusCode()).as(pre).isEqualTo(429);
                String text = new String(raw.body(), StandardCharsets.UTF_8);
                assertThat(raw.headers().firstValue("Content-Length")).as(pre).hasValue(Integer.toString(raw.body().length));
                assertThat(text).as(pre).startsWith("{\"type\":").endsWith("}").contains("\"rule\":\"m\"");
                // Its Content-Encoding stays: a compressing filter after the limiter may apply it.
                assertThat(raw.headers().map().keySet()).as(pre)
                        .noneMatch(name -> (name.equalsIgnoreCase("ETag") && !pre.equals("strict-wrapper"))
                                || name.equalsIgnoreCase("Content-Disposition") || name.equalsIgnoreCase("Content-Language")
                                || name.equalsIgnoreCase("Transfer-Encoding"));
            }
        }
    }

    private static HttpResponse<byte[]> get(App app, String path, String caller, String pre) throws Exception {
        return JettyApp.HTTP.send(HttpRequest.newBuilder(app.uri(path)).timeout(Duration.ofSeconds(30))
                .header("X-Caller", caller).header("X-Pre", pre).build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    /** A response that compresses what is written to it, as a compression filter's wrapper does. */
    private static final class Gzip extends HttpServletResponseWrapper {
        private java.util.zip.GZIPOutputStream gzip;
        private jakarta.servlet.ServletOutputStream stream;

        Gzip(HttpServletResponse response) {
            super(response);
        }

        @Override
        public jakarta.servlet.ServletOutputStream getOutputStream() throws java.io.IOException {
            if (stream == null) {
                gzip = new java.util.zip.GZIPOutputStream(super.getOutputStream(), true);
                stream = new jakarta.servlet.ServletOutputStream() {
                    @Override
                    public boolean isReady() {
                        return true;
                    }

                    @Override
                    public void setWriteListener(jakarta.servlet.WriteListener listener) {
                        throw new UnsupportedOperationException();
                    }

                    @Override
                    public void write(int b) throws java.io.IOException {
                        gzip.write(b);
                    }

                    @Override
                    public void write(byte[] b, int offset, int length) throws java.io.IOException {
                        gzip.write(b, offset, length);
                    }
                };
            }
            return stream;
        }

        @Override
        public void setContentLength(int length) {
            // The compressed length is not known yet.
        }

        void finish() throws java.io.IOException {
            if (gzip != null) {
                gzip.finish();
            }
        }
    }

    /** The whole response as sent, read to the end of its last chunk (the client drops trailers). */
    private static String onTheWire(java.net.URI uri, String caller) throws Exception {
        try (java.net.Socket socket = new java.net.Socket(uri.getHost(), uri.getPort())) {
            socket.setSoTimeout(30_000);
            socket.getOutputStream().write(("GET " + uri.getPath() + " HTTP/1.1\r\nHost: " + uri.getHost() + "\r\n"
                    + "X-Caller: " + caller + "\r\nX-Pre: " + caller + "\r\nTE: trailers\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }

    private static HttpResponse<byte[]> sendBytes(App app, String caller, String pre) throws Exception {
        return JettyApp.HTTP.send(HttpRequest.newBuilder(app.uri("/run")).timeout(Duration.ofSeconds(30))
                .header("X-Caller", caller).header("X-Pre", pre).build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static HttpResponse<String> send(App app, String caller, String pre) throws Exception {
        return JettyApp.HTTP.send(HttpRequest.newBuilder(app.uri("/run")).timeout(Duration.ofSeconds(30))
                .header("X-Caller", caller).header("X-Pre", pre).build(), HttpResponse.BodyHandlers.ofString());
    }
}
