package dev.ratelimit.config;

import java.util.Enumeration;

/**
 * What the rules look at in a request, whatever carries it: the servlet request in the filter,
 * the command line's arguments in {@code ratelimit explain}. Matching, keys and plans are
 * decided over this view alone ({@link RequestMatcher}), so that both say the same.
 */
public interface RequestView {

    /**
     * The HTTP method, as sent.
     *
     * @return e.g. {@code GET}
     */
    String method();

    /**
     * The path within the application: the servlet path and path info, decoded and normalised
     * by the container, without the context path or the query ({@link RequestPath} reads a path
     * as sent the same way).
     *
     * @return at least {@code /}
     */
    String path();

    /**
     * A header's first value.
     *
     * @param name the header's name, in any case
     * @return the value, or null when the request has no such header
     */
    String header(String name);

    /**
     * Every line of a header, in order.
     *
     * @param name the header's name, in any case
     * @return the lines; empty (or null, as a container may answer) when there are none
     */
    Enumeration<String> headers(String name);

    /**
     * A request parameter's first value (query or form).
     *
     * @param name the parameter's name
     * @return the value, or null when the request has no such parameter
     */
    String parameter(String name);

    /**
     * The authenticated user's name.
     *
     * @return the name, or null for a request nobody authenticated
     */
    String principal();

    /**
     * Whether the authenticated user has a role.
     *
     * @param role the role
     * @return true when the user has it; false for a request nobody authenticated
     */
    boolean isUserInRole(String role);

    /**
     * A request attribute, as the application's own code set it.
     *
     * @param name the attribute's name
     * @return its value, or null
     */
    Object attribute(String name);

    /**
     * The peer's address: the client's, or a proxy's.
     *
     * @return the address text, as {@code getRemoteAddr()} gives it
     */
    String remoteAddr();
}
