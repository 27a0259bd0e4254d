package dev.ratelimit.config;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Where a rule finds the caller's plan ({@code ratelimit.rule.<name>.plan}).
 *
 * @param kind  where to look
 * @param name  the header or request attribute's name; empty for roles
 * @param roles for {@link Kind#ROLE}: the roles, in order of precedence; each is also a plan name
 */
public record PlanSpec(Kind kind, String name, List<String> roles) {

    /** Plan names: safe in messages and property names. */
    static final Pattern PLAN_NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");

    /** Where the plan comes from. */
    public enum Kind {
        /**
         * A request header, e.g. set by an API gateway. Believed only from a trusted proxy
         * ({@code ratelimit.trusted-proxies}); from anyone else it is ignored, as an untrusted
         * forwarding header is: the caller gets the rule's own limit.
         */
        HEADER,
        /** The first of the listed roles the caller has ({@code isUserInRole}): authenticated, trusted. */
        ROLE,
        /** A request attribute the application's own authentication sets: trusted. */
        ATTRIBUTE
    }

    /** Copies the list. */
    public PlanSpec {
        roles = List.copyOf(roles);
    }

    /**
     * Parses {@code header:<name>}, {@code role:<role>,<role>...} or {@code attribute:<name>}.
     *
     * @param value the setting's value
     * @return the spec, or empty when the value is none of those
     */
    static Optional<PlanSpec> parse(String value) {
        String text = value.trim();
        int colon = text.indexOf(':');
        if (colon < 0) {
            return Optional.empty();
        }
        String rest = text.substring(colon + 1).trim();
        switch (text.substring(0, colon).trim()) {
            case "header":
                return rest.matches("[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}")
                        ? Optional.of(new PlanSpec(Kind.HEADER, rest, List.of())) : Optional.empty();
            case "attribute":
                return rest.isEmpty() ? Optional.empty() : Optional.of(new PlanSpec(Kind.ATTRIBUTE, rest, List.of()));
            case "role":
                List<String> roles = Arrays.stream(rest.split(",")).map(String::trim).toList();
                return roles.isEmpty() || roles.stream().anyMatch(r -> !PLAN_NAME.matcher(r).matches())
                        ? Optional.empty() : Optional.of(new PlanSpec(Kind.ROLE, "", roles));
            default:
                return Optional.empty();
        }
    }
}
