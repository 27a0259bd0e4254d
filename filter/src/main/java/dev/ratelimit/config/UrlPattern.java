package dev.ratelimit.config;

import java.util.Optional;

/**
 * A servlet URL pattern, matched against the path within the application the container
 * dispatches to (servlet path + path info: decoded, with {@code ..} and path parameters
 * already resolved by the container, so {@code /api/..;/login} is matched as {@code /login}).
 *
 * <ul>
 *   <li>{@code /login}: exactly that path;</li>
 *   <li>{@code /api/*}: {@code /api} and everything below it;</li>
 *   <li>{@code *.json}: any path ending in {@code .json};</li>
 *   <li>{@code /} or {@code /*}: every path.</li>
 * </ul>
 *
 * @param text the pattern as written
 */
public record UrlPattern(String text) {

    /**
     * Parses a pattern.
     *
     * @param text the pattern as written in settings
     * @return the pattern, or empty when it is none of the servlet forms
     */
    public static Optional<UrlPattern> parse(String text) {
        String s = text.trim();
        boolean valid = s.equals("/")
                || (s.startsWith("*.") && s.length() > 2 && s.indexOf('/') < 0 && s.indexOf('*', 1) < 0)
                || (s.startsWith("/") && (s.indexOf('*') < 0 || (s.endsWith("/*") && s.indexOf('*') == s.length() - 1)));
        return valid ? Optional.of(new UrlPattern(s)) : Optional.empty();
    }

    /**
     * Whether the path matches.
     *
     * @param path the path within the application, starting with {@code /}
     * @return true on a match
     */
    public boolean matches(String path) {
        if (text.equals("/") || text.equals("/*")) {
            return true;
        }
        if (text.startsWith("*.")) {
            return path.endsWith(text.substring(1)); // the suffix has no '/', so it is the last segment's
        }
        if (text.endsWith("/*")) {
            String prefix = text.substring(0, text.length() - 2);
            return path.equals(prefix) || path.startsWith(prefix + "/");
        }
        return path.equals(text);
    }

    @Override
    public String toString() {
        return text;
    }
}
