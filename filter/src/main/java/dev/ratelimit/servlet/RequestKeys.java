package dev.ratelimit.servlet;

import dev.ratelimit.Claim;
import dev.ratelimit.Rule;
import java.util.ArrayList;
import java.util.List;
import dev.ratelimit.config.KeySpec;
import dev.ratelimit.config.PlanSpec;
import dev.ratelimit.config.RuleSettings;
import dev.ratelimit.internal.KeyValues;
import jakarta.servlet.http.HttpServletRequest;

import java.security.Principal;
import java.util.Locale;
import java.util.Optional;
import java.util.StringJoiner;
import java.util.function.Supplier;

/**
 * Builds the key a rule counts a request under, e.g. {@code ip:192.0.2.1},
 * {@code user:alice}, {@code ip:192.0.2.1+path:/api/search}. A request without a value the
 * rule needs (no principal, no such header or parameter) has no key: the rule does not count
 * it. No key is ever built from an empty value.
 */
final class RequestKeys {

    private final ClientAddressResolver addresses;
    private final String clientIpHeader;
    /** The application's own limits, or null when it provides none. */
    private final ProvidedLimits provided;

    RequestKeys(ClientAddressResolver addresses, String clientIpHeader, ProvidedLimits provided) {
        this.addresses = addresses;
        this.clientIpHeader = clientIpHeader;
        this.provided = provided;
    }

    /**
     * The rules that apply to a request and have a key for it, with their claims, in the
     * order of the settings.
     *
     * @param rules   one rule's settings and its claim, per rule that applies
     * @param claims  the claims, in the same order
     */
    record Matched(List<RuleSettings> rules, List<Claim> claims) {
    }

    /**
     * Matches a request against the rules.
     *
     * @param request the request
     * @param rules   every configured rule
     * @return the rules that apply and their claims
     */
    Matched match(HttpServletRequest request, List<RuleSettings> rules) {
        String path = path(request);
        String method = request.getMethod();
        // Resolved once, and only if a rule's key needs it (walking forwarding headers costs).
        String[] resolved = new String[1];
        Supplier<String> address = () -> {
            if (resolved[0] == null) {
                resolved[0] = clientAddress(request);
            }
            return resolved[0];
        };
        List<RuleSettings> matched = new ArrayList<>();
        List<Claim> claims = new ArrayList<>();
        for (RuleSettings rule : rules) {
            if (!rule.appliesTo(method, path)) {
                continue;
            }
            Optional<String> key = key(rule, request, path, address);
            if (key.isPresent()) {
                matched.add(rule);
                Rule applied = planRule(rule, request);
                if (provided != null) {
                    applied = provided.apply(applied, key.get(), request.getUserPrincipal(), rule.cost());
                }
                claims.add(Claim.of(applied, key.get(), rule.cost()));
            }
        }
        return new Matched(matched, claims);
    }

    /**
     * The rule for the caller's plan. A header is read only from a trusted proxy (see
     * {@link PlanSpec.Kind#HEADER}): from anyone else it is not even looked at, so that a client
     * cannot choose the shape its shared state is written in.
     */
    private Rule planRule(RuleSettings rule, HttpServletRequest request) {
        if (rule.plan().isEmpty()) {
            return rule.rule();
        }
        PlanSpec plan = rule.plan().get();
        return switch (plan.kind()) {
            case HEADER -> addresses.isTrustedPeer(request.getRemoteAddr())
                    ? rule.ruleFor(request.getHeader(plan.name()), true) : rule.rule();
            case ATTRIBUTE -> {
                Object value = request.getAttribute(plan.name());
                yield rule.ruleFor(value == null ? null : value.toString(), true);
            }
            case ROLE -> {
                String role = null;
                for (String candidate : plan.roles()) {
                    if (request.isUserInRole(candidate)) {
                        role = candidate;
                        break;
                    }
                }
                yield rule.ruleFor(role, true);
            }
        };
    }

    /** The path within the application the container dispatches to, already decoded and normalised. */
    private static String path(HttpServletRequest request) {
        String servletPath = request.getServletPath();
        String pathInfo = request.getPathInfo();
        String path = (servletPath == null ? "" : servletPath) + (pathInfo == null ? "" : pathInfo);
        return path.isEmpty() ? "/" : path;
    }

    /**
     * The client address of a request, resolved once per request by the caller.
     *
     * @param request the request
     * @return the address text used in keys
     */
    String clientAddress(HttpServletRequest request) {
        return addresses.resolve(request.getRemoteAddr(), request.getHeaders(clientIpHeader));
    }

    /**
     * The rule's key for the request.
     *
     * @param rule          the rule
     * @param request       the request
     * @param path          the path within the application
     * @param clientAddress the client address from {@link #clientAddress}, asked for only when
     *                      the rule's key needs it
     * @return the key, or empty when the request lacks a value the rule needs
     */
    Optional<String> key(RuleSettings rule, HttpServletRequest request, String path, Supplier<String> clientAddress) {
        StringJoiner key = new StringJoiner("+");
        for (KeySpec.Part part : rule.key().parts()) {
            Optional<String> value = value(part, request, path, clientAddress, rule.lowercaseKey());
            if (value.isEmpty()) {
                return Optional.empty();
            }
            key.add(value.get());
        }
        return Optional.of(key.toString());
    }

    private static Optional<String> value(KeySpec.Part part, HttpServletRequest request, String path,
                                          Supplier<String> clientAddress, boolean lowercase) {
        return switch (part.kind()) {
            case IP -> Optional.of("ip:" + KeyValues.safe(clientAddress.get()));
            case PRINCIPAL -> principal(request, lowercase).map(name -> "user:" + name);
            case PRINCIPAL_OR_IP -> principal(request, lowercase).map(name -> "user:" + name)
                    .or(() -> Optional.of("ip:" + KeyValues.safe(clientAddress.get())));
            case PATH -> Optional.of("path:" + KeyValues.safe(path));
            case HEADER -> present(request.getHeader(part.name()), lowercase)
                    .map(v -> "header." + part.name().toLowerCase(Locale.ROOT) + ":" + v);
            case PARAM -> present(request.getParameter(part.name()), lowercase)
                    .map(v -> "param." + part.name() + ":" + v);
            case GLOBAL -> Optional.of("global");
        };
    }

    private static Optional<String> principal(HttpServletRequest request, boolean lowercase) {
        Principal principal = request.getUserPrincipal();
        return principal == null ? Optional.empty() : present(principal.getName(), lowercase);
    }

    /** Non-empty values only, made safe so that no value can pose as another key part. */
    private static Optional<String> present(String value, boolean lowercase) {
        if (value == null || value.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(KeyValues.safe(lowercase ? value.toLowerCase(Locale.ROOT) : value));
    }
}
