package dev.ratelimit.bench;

import dev.ratelimit.servlet.RateLimitFilter;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

import java.io.IOException;
import java.time.Duration;
import java.util.EnumSet;

/**
 * One application, {@code GET /api/hello} answering {@code hello}, on embedded Jetty 12, behind
 * one of the filters a user would pick, to compare them over HTTP side by side
 * ({@code bench/http-three.sh}):
 * <ul>
 *   <li>{@code off}: no filter;</li>
 *   <li>{@code ours}: {@link RateLimitFilter}, its rules from MicroProfile Config (the system
 *       properties {@code ratelimit.*} the script passes: a token bucket keyed by the client's
 *       address);</li>
 *   <li>{@code minimal}: a filter calling the minimal token-bucket script with one
 *       {@code EVALSHA} per request on a pooled Jedis client, the floor of one round trip;</li>
 *   <li>{@code bucket4j}: Bucket4j's {@code JedisBasedProxyManager} (compare-and-swap) in a filter;</li>
 *   <li>{@code canned}: no limiter, a filter answering every request with a fixed 429 shaped as
 *       ours answers a client over its limit (the same fields and a problem body of the same
 *       length), set through the servlet API as ours sets it: the floor of answering that 429,
 *       against which ours on a client over its limit (the deny cache) shows its own cost.</li>
 * </ul>
 * Every limiter keys by the client's address with a limit no request reaches (but the script's
 * {@code ours-hammer}, ours with a limit of one).
 */
public final class HttpBenchServer {

    private HttpBenchServer() {
    }

    /**
     * Serves until killed.
     *
     * @param args the mode ({@code off}, {@code ours}, {@code minimal}, {@code bucket4j}), the
     *             port, the Valkey URL
     * @throws Exception when Jetty cannot start
     */
    public static void main(String[] args) throws Exception {
        String mode = args[0];
        int port = Integer.parseInt(args[1]);
        String url = args[2];
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(port);
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler("/");
        long capacity = 1_000_000_000L;
        Duration refill = Duration.ofSeconds(1);
        FilterHolder filter = switch (mode) {
            case "off" -> null;
            case "ours" -> new FilterHolder(RateLimitFilter.class);
            case "minimal" -> new FilterHolder(new ContenderFilter(new BareJedis(url, capacity, refill)));
            case "bucket4j" -> new FilterHolder(new ContenderFilter(new Bucket4jLimiter(url, capacity, refill)));
            case "canned" -> new FilterHolder(new Canned429());
            default -> throw new IllegalArgumentException("mode: off, ours, minimal, bucket4j or canned, not " + mode);
        };
        if (filter != null) {
            filter.setAsyncSupported(true);
            context.addFilter(filter, "/*", EnumSet.allOf(DispatcherType.class));
        }
        ServletHolder hello = new ServletHolder(new Hello());
        hello.setAsyncSupported(true);
        context.addServlet(hello, "/api/hello");
        server.setHandler(context);
        server.start();
        System.out.println("serving " + mode + " on " + port);
        server.join();
    }

    /** The application: a constant answer. */
    static final class Hello extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
            response.setContentType("text/plain");
            response.getWriter().write("hello");
        }
    }

    /**
     * A 429 of the shape ours sends a client over an hour's limit of one (the rule {@code api}),
     * with no limiter: what answering it costs the container and the client alone.
     */
    static final class Canned429 implements Filter {
        private static final byte[] BODY = ("{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\","
                + "\"title\":\"Too Many Requests\",\"status\":429,\"detail\":\"The rate limit 'api' is exhausted; "
                + "retry in 3599 s.\",\"violated-policies\":[\"api\"],\"rule\":\"api\",\"retryAfter\":3599}")
                .getBytes(java.nio.charset.StandardCharsets.UTF_8);

        @Override
        public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain) throws IOException {
            HttpServletResponse http = (HttpServletResponse) response;
            http.setHeader("RateLimit-Policy", "\"api\";q=1;w=3600");
            http.setHeader("RateLimit", "\"api\";r=0;t=3599");
            http.setStatus(429);
            http.setHeader("Retry-After", "3599");
            http.setHeader("Cache-Control", "no-store");
            http.setContentType("application/problem+json;charset=UTF-8");
            http.getOutputStream().write(BODY);
        }
    }

    /** A limiter a user writes around a client library: one token per request, 429 when refused. */
    static final class ContenderFilter implements Filter {
        private final Contender contender;

        ContenderFilter(Contender contender) {
            this.contender = contender;
        }

        @Override
        public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
                throws IOException, ServletException {
            if (contender.tryAcquire(request.getRemoteAddr())) {
                chain.doFilter(request, response);
            } else {
                ((HttpServletResponse) response).sendError(429);
            }
        }

        @Override
        public void destroy() {
            contender.close();
        }
    }
}
