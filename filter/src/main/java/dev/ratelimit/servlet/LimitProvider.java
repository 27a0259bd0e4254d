package dev.ratelimit.servlet;

import dev.ratelimit.Rule;

import java.security.Principal;
import java.util.OptionalLong;

/**
 * Limits kept by the application, e.g. per customer in its database: the filter asks for the
 * limit of a rule for a caller, and holds the caller to it instead of the configured one.
 *
 * <p>The filter finds a provider in the servlet context attribute named by this interface's
 * class name, set before the filter starts (e.g. by a {@code ServletContextListener}), or else
 * as a {@link java.util.ServiceLoader} service of the application. Answers are cached per rule,
 * key and window for {@code ratelimit.limit-provider.cache-ttl} (default 60 s), at most
 * {@code ratelimit.limit-provider.cache-size} of them (default 10,000). What is cached is the
 * number: it is applied at each request to the rule as the settings and the caller's plan have
 * it then (its burst scaled alike), so a refreshed rule or a change of plan holds at once; an
 * answer should therefore depend on the caller, not on the rule's limit. A provider that throws,
 * answers a limit the rule cannot take, or takes longer than
 * {@code ratelimit.limit-provider.timeout} (default 50 ms) leaves the caller on the configured
 * limit, and is logged once; a slow answer that arrives later is cached for the next requests.
 *
 * <p>The provider is called on a thread of the filter's, not the request's, so that a slow one
 * can be left behind: it is given what identifies the caller (the rule's key and the principal),
 * never the request itself, which may be finished and recycled by the time a slow answer comes.
 * Implementations must be thread-safe.
 */
@FunctionalInterface
public interface LimitProvider {

    /**
     * The limit of a rule for one caller.
     *
     * @param rule    the rule as configured, or as the caller's plan has it
     * @param key       the key the rule counts the request under, e.g. {@code user:alice}
     * @param principal the authenticated caller, or null for an anonymous one
     * @return units per the rule's window for this caller (a burst scales with it), or empty
     *         to keep the rule's own
     */
    OptionalLong limit(Rule rule, String key, Principal principal);
}
