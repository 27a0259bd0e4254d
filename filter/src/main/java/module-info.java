/**
 * A distributed rate-limiting filter for Jakarta web applications, backed by Valkey.
 *
 * <p>The public surface is five packages:
 * <ul>
 *   <li>{@code dev.ratelimit}: the API ({@code RateLimiter}, {@code Rule}, {@code Claim},
 *       {@code Decision}, {@code Decisions}, {@code FailurePolicy},
 *       {@code RateLimitListener}, the exceptions);</li>
 *   <li>{@code dev.ratelimit.resilient}: {@code ResilientRateLimiter}, a store behind a deny cache, with
 *       per-rule failure policies and the in-process fallback;</li>
 *   <li>{@code dev.ratelimit.servlet}: {@code RateLimitFilter}, {@code LimitProvider} and {@code ListenerProvider};</li>
 *   <li>{@code dev.ratelimit.valkey}: {@code ValkeyRateLimiter} and {@code ValkeySettings};</li>
 *   <li>{@code dev.ratelimit.local}: {@code LocalRateLimiter}, the in-process limiter.</li>
 * </ul>
 * Everything else (settings reading, metrics, address parsing, shared internals) is not
 * exported and may change in any release. On the class path, where containers load a WAR's
 * libraries, the JAR works the same; this descriptor only states what is meant to be used.
 */
module dev.ratelimit {
    requires transitive jakarta.servlet;
    requires transitive redis.clients.jedis;
    requires org.apache.commons.pool2;
    requires microprofile.config.api;
    requires java.management;

    exports dev.ratelimit;
    exports dev.ratelimit.servlet;
    exports dev.ratelimit.valkey;
    exports dev.ratelimit.local;
    exports dev.ratelimit.resilient;
    // An application's own limits, found as a service when not set in the servlet context.
    uses dev.ratelimit.servlet.LimitProvider;
    // A metrics library's listener, found when the application sets none.
    uses dev.ratelimit.servlet.ListenerProvider;
    // The platform MBean server reads the per-rule MBean interfaces.
    exports dev.ratelimit.metrics to java.management;
}
