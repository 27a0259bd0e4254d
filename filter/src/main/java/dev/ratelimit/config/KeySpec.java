package dev.ratelimit.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * What a rule counts per: one or more parts joined by {@code +}, e.g. {@code ip},
 * {@code principal-or-ip}, {@code header:X-Api-Key}, {@code ip+path}.
 *
 * @param parts the parts, in the order written
 */
public record KeySpec(List<Part> parts) {

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,128}");

    /** Copies the list. */
    public KeySpec {
        parts = List.copyOf(parts);
    }

    /** The kinds of value a key can be made of. */
    public enum Kind {
        /** The client address (behind trusted proxies: the forwarded one). */
        IP("ip"),
        /** The authenticated user's name; requests without one are not counted. */
        PRINCIPAL("principal"),
        /** The user's name when authenticated, the client address otherwise. */
        PRINCIPAL_OR_IP("principal-or-ip"),
        /** The path within the application. */
        PATH("path"),
        /** A request header's value; requests without it are not counted. */
        HEADER("header"),
        /** A request parameter's value; requests without it are not counted. */
        PARAM("param"),
        /** One shared key for every request. */
        GLOBAL("global");

        private final String id;

        Kind(String id) {
            this.id = id;
        }

        /**
         * The id in settings.
         *
         * @return e.g. {@code principal-or-ip}
         */
        public String id() {
            return id;
        }
    }

    /**
     * One part of a key.
     *
     * @param kind the kind
     * @param name the header or parameter name for {@link Kind#HEADER} and {@link Kind#PARAM},
     *             empty otherwise
     */
    public record Part(Kind kind, String name) {

        /**
         * The part as a {@code key} setting writes it.
         *
         * @return e.g. {@code ip}, {@code param:username}
         */
        public String text() {
            return name.isEmpty() ? kind.id() : kind.id() + ":" + name;
        }
    }

    /**
     * Parses a key specification.
     *
     * @param text e.g. {@code ip+path}
     * @return the specification, or empty when a part is unknown or malformed
     */
    public static Optional<KeySpec> parse(String text) {
        List<Part> parts = new ArrayList<>();
        for (String raw : text.trim().split("\\+", -1)) {
            String part = raw.trim();
            Optional<Part> parsed = parsePart(part);
            if (parsed.isEmpty() || parts.contains(parsed.get())) {
                return Optional.empty();
            }
            parts.add(parsed.get());
        }
        return Optional.of(new KeySpec(parts));
    }

    private static Optional<Part> parsePart(String part) {
        int colon = part.indexOf(':');
        String kind = colon < 0 ? part : part.substring(0, colon);
        String name = colon < 0 ? "" : part.substring(colon + 1).trim();
        for (Kind k : Kind.values()) {
            if (k.id.equals(kind)) {
                boolean named = k == Kind.HEADER || k == Kind.PARAM;
                if (named != (colon >= 0) || (named && !NAME.matcher(name).matches())) {
                    return Optional.empty();
                }
                return Optional.of(new Part(k, name));
            }
        }
        return Optional.empty();
    }

    @Override
    public String toString() {
        return String.join("+", parts.stream().map(Part::text).toList());
    }
}
