package dev.ratelimit.config;

import dev.ratelimit.Rule;
import dev.ratelimit.internal.KeyValues;
import dev.ratelimit.net.ClientAddressResolver;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.StringJoiner;
import java.util.function.Supplier;

/**
 * Which rules a request falls under, the key each counts it under and the plan it is held to,
 * e.g. keys {@code ip:192.0.2.1}, {@code user:alice}, {@code ip:192.0.2.1+path:/api/search}. A
 * request without a value the rule needs (no principal, no such header or parameter) has no
 * key: the rule does not count it. No key is ever built from an empty value.
 *
 * <p>The filter decides every request by this class and {@code ratelimit explain} explains one
 * by it, over a {@link RequestView}: what the command says is what the filter does.
 */
public final class RequestMatcher {

    private final ClientAddressResolver addresses;
    private final String clientIpHeader;

    /**
     * A matcher for one reading of the settings.
     *
     * @param addresses      the client address resolver (trusted proxies, IPv6 prefix)
     * @param clientIpHeader the forwarding header it reads
     */
    public RequestMatcher(ClientAddressResolver addresses, String clientIpHeader) {
        this.addresses = addresses;
        this.clientIpHeader = clientIpHeader;
    }

    /**
     * The matcher the settings describe.
     *
     * @param settings the filter's settings
     * @return its matcher
     */
    public static RequestMatcher of(FilterSettings settings) {
        return new RequestMatcher(new ClientAddressResolver(settings.trustedProxies(), settings.clientIpHeader(),
                settings.ipv6Prefix()), settings.clientIpHeader());
    }

    /**
     * One rule a request falls under.
     *
     * @param settings the rule's settings
     * @param key      what it counts the request under
     * @param rule     the rule the caller is held to: the rule's own, or its plan's
     */
    public record Match(RuleSettings settings, String key, Rule rule) {
    }

    /**
     * The rules that apply to a request and have a key for it, in the order of the settings.
     *
     * @param request the request
     * @param rules   every configured rule
     * @return one match per rule that counts the request
     */
    public List<Match> match(RequestView request, List<RuleSettings> rules) {
        String path = request.path();
        String method = request.method();
        Supplier<String> address = lazyClientAddress(request);
        List<Match> matched = new ArrayList<>();
        for (RuleSettings rule : rules) {
            if (!rule.appliesTo(method, path)) {
                continue;
            }
            Optional<String> key = key(rule, request, address);
            if (key.isPresent()) {
                matched.add(new Match(rule, key.get(), planRule(rule, request)));
            }
        }
        return matched;
    }

    /**
     * The client address, resolved once and only if a rule's key asks for it (walking
     * forwarding headers costs).
     *
     * @param request the request
     * @return the address, resolved at the first call
     */
    public Supplier<String> lazyClientAddress(RequestView request) {
        String[] resolved = new String[1];
        return () -> {
            if (resolved[0] == null) {
                resolved[0] = clientAddress(request);
            }
            return resolved[0];
        };
    }

    /**
     * The client address of a request as keys use it: the peer's, or behind trusted proxies
     * the forwarded one.
     *
     * @param request the request
     * @return the address text used in keys
     */
    public String clientAddress(RequestView request) {
        return addresses.resolve(request.remoteAddr(), request.headers(clientIpHeader));
    }

    /**
     * Whether the request's peer is a trusted proxy, whose headers are believed.
     *
     * @param request the request
     * @return true for a peer in {@code ratelimit.trusted-proxies}
     */
    public boolean fromTrustedPeer(RequestView request) {
        return addresses.isTrustedPeer(request.remoteAddr());
    }

    /**
     * The plan the filter reads for the caller. A header is read only from a trusted proxy (see
     * {@link PlanSpec.Kind#HEADER}): from anyone else it is not even looked at, so that a client
     * cannot choose the shape its shared state is written in.
     *
     * @param rule    the rule
     * @param request the request
     * @return the plan's name as the request gives it (listed or not), or empty when it has none
     */
    public Optional<String> plan(RuleSettings rule, RequestView request) {
        if (rule.plan().isEmpty()) {
            return Optional.empty();
        }
        PlanSpec plan = rule.plan().get();
        return switch (plan.kind()) {
            case HEADER -> fromTrustedPeer(request) ? Optional.ofNullable(request.header(plan.name())) : Optional.empty();
            case ATTRIBUTE -> Optional.ofNullable(request.attribute(plan.name())).map(Object::toString);
            case ROLE -> plan.roles().stream().filter(request::isUserInRole).findFirst();
        };
    }

    /**
     * The rule for the caller's plan.
     *
     * @param rule    the rule
     * @param request the request
     * @return the plan's rule, or the rule's own for no plan or an unlisted one
     */
    public Rule planRule(RuleSettings rule, RequestView request) {
        return rule.plan().isEmpty() ? rule.rule() : rule.ruleFor(plan(rule, request).orElse(null), true);
    }

    /**
     * The rule's key for the request.
     *
     * @param rule          the rule
     * @param request       the request
     * @param clientAddress the client address, asked for only when the rule's key needs it
     * @return the key, or empty when the request lacks a value the rule needs
     */
    public Optional<String> key(RuleSettings rule, RequestView request, Supplier<String> clientAddress) {
        List<KeySpec.Part> parts = rule.key().parts();
        if (parts.size() == 1) {
            // The usual key, of one part, is that part's value: nothing to join.
            return value(parts.get(0), request, clientAddress, rule.lowercaseKey());
        }
        StringJoiner key = new StringJoiner("+");
        for (KeySpec.Part part : parts) {
            Optional<String> value = value(part, request, clientAddress, rule.lowercaseKey());
            if (value.isEmpty()) {
                return Optional.empty();
            }
            key.add(value.get());
        }
        return Optional.of(key.toString());
    }

    /**
     * The first part of the rule's key the request has no value for: why it has no key.
     *
     * @param rule    the rule
     * @param request the request
     * @return the part, or empty when the request has a key
     */
    public Optional<KeySpec.Part> missingPart(RuleSettings rule, RequestView request) {
        Supplier<String> address = lazyClientAddress(request);
        return rule.key().parts().stream()
                .filter(part -> value(part, request, address, rule.lowercaseKey()).isEmpty()).findFirst();
    }

    private static Optional<String> value(KeySpec.Part part, RequestView request, Supplier<String> clientAddress,
                                          boolean lowercase) {
        return switch (part.kind()) {
            case IP -> Optional.of("ip:" + KeyValues.safe(clientAddress.get()));
            case PRINCIPAL -> present(request.principal(), lowercase).map(name -> "user:" + name);
            case PRINCIPAL_OR_IP -> present(request.principal(), lowercase).map(name -> "user:" + name)
                    .or(() -> Optional.of("ip:" + KeyValues.safe(clientAddress.get())));
            case PATH -> Optional.of("path:" + KeyValues.safe(request.path()));
            case HEADER -> present(request.header(part.name()), lowercase)
                    .map(v -> "header." + part.name().toLowerCase(Locale.ROOT) + ":" + v);
            case PARAM -> present(request.parameter(part.name()), lowercase)
                    .map(v -> "param." + part.name() + ":" + v);
            case GLOBAL -> Optional.of("global");
        };
    }

    /** Non-empty values only, made safe so that no value can pose as another key part. */
    private static Optional<String> present(String value, boolean lowercase) {
        if (value == null || value.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(KeyValues.safe(lowercase ? value.toLowerCase(Locale.ROOT) : value));
    }
}
