package dev.ratelimit.cli;

import dev.ratelimit.config.RequestView;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A request described on the command line, as the filter's rules look at it: what
 * {@code ratelimit explain} hands to the filter's own matcher in place of a servlet request.
 *
 * @param method     the HTTP method, as sent
 * @param path       the path within the application, without the query
 * @param headers    header lines, name then value, in order (names in any case)
 * @param parameters parameters, name then value, in order: the query's first, then the given ones
 * @param principal  the authenticated user's name, or null
 * @param roles      the user's roles
 * @param attributes request attributes the application's own code would set
 * @param remoteAddr the peer's address
 */
record ArgumentRequest(String method, String path, List<Map.Entry<String, String>> headers,
                       List<Map.Entry<String, String>> parameters, String principal, Set<String> roles,
                       Map<String, String> attributes, String remoteAddr) implements RequestView {

    /** Copies the collections. */
    ArgumentRequest {
        headers = List.copyOf(headers);
        parameters = List.copyOf(parameters);
        roles = Set.copyOf(roles);
        attributes = Map.copyOf(attributes);
    }

    /**
     * The parameters of a query string, decoded as a container decodes them (UTF-8, {@code +}
     * for a space), in order.
     *
     * @param query the text after {@code ?}
     * @return name and value of each pair; a pair without {@code =} has an empty value
     */
    static List<Map.Entry<String, String>> query(String query) {
        return java.util.Arrays.stream(query.split("&")).filter(pair -> !pair.isEmpty()).map(pair -> {
            int eq = pair.indexOf('=');
            String name = eq < 0 ? pair : pair.substring(0, eq);
            String value = eq < 0 ? "" : pair.substring(eq + 1);
            return Map.entry(URLDecoder.decode(name, StandardCharsets.UTF_8), URLDecoder.decode(value, StandardCharsets.UTF_8));
        }).toList();
    }

    @Override
    public String header(String name) {
        return headers.stream().filter(h -> h.getKey().equalsIgnoreCase(name)).map(Map.Entry::getValue)
                .findFirst().orElse(null);
    }

    @Override
    public Enumeration<String> headers(String name) {
        return Collections.enumeration(headers.stream().filter(h -> h.getKey().equalsIgnoreCase(name))
                .map(Map.Entry::getValue).toList());
    }

    @Override
    public String parameter(String name) {
        return parameters.stream().filter(p -> p.getKey().equals(name)).map(Map.Entry::getValue)
                .findFirst().orElse(null);
    }

    @Override
    public boolean isUserInRole(String role) {
        // As the servlet API: a request nobody authenticated has no roles.
        return principal != null && roles.contains(role);
    }

    @Override
    public Object attribute(String name) {
        return attributes.get(name);
    }
}
