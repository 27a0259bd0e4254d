package dev.ratelimit.config;

import dev.ratelimit.internal.KeyValues;
import dev.ratelimit.net.ClientAddressResolver;
import dev.ratelimit.net.IpAddress;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The key a rule builds, from values an operator types: one value per part of the rule's key
 * ({@code global} takes none), in the order the key names them, made exactly as the filter makes
 * them from a request (lower-cased when the rule says so, IPv6 addresses counted per network,
 * unusual values hashed). For {@code inspect} and {@code reset} on the command line and on a
 * rule's MBean.
 */
public final class OperatorKeys {

    private OperatorKeys() {
    }

    /**
     * The key for these values.
     *
     * @param rule       the rule
     * @param values     one per part of its key but {@code global}: an address for {@code ip}, a
     *                   user name for {@code principal}; for {@code principal-or-ip}
     *                   {@code user:NAME} or {@code ip:ADDRESS} (a bare value is an address when
     *                   it reads as one, a user name otherwise); for {@code path} the path as
     *                   sent or decoded ({@link RequestPath}); the value itself for the others
     * @param ipv6Prefix the bits an IPv6 address is counted by ({@code ratelimit.ipv6-prefix})
     * @return the key, e.g. {@code param.username:alice}
     * @throws IllegalArgumentException naming the rule, its key and the value, for a wrong number
     *                                  of values or a value that is not what its part needs
     */
    public static String keyOf(RuleSettings rule, List<String> values, int ipv6Prefix) {
        List<KeySpec.Part> parts = rule.key().parts().stream().filter(p -> p.kind() != KeySpec.Kind.GLOBAL).toList();
        if (values.size() != parts.size()) {
            throw new IllegalArgumentException("rule '" + rule.rule().name() + "' has key " + rule.key() + ": give "
                    + parts.size() + " value(s) (" + String.join(", ", parts.stream().map(KeySpec.Part::text).toList())
                    + "), not " + values.size());
        }
        List<String> key = new ArrayList<>();
        int next = 0;
        for (KeySpec.Part part : rule.key().parts()) {
            if (part.kind() == KeySpec.Kind.GLOBAL) {
                key.add("global");
            } else {
                key.add(value(rule, part, values.get(next++), ipv6Prefix));
            }
        }
        return String.join("+", key);
    }

    /**
     * The key for values typed in one text, as a JMX console takes them: a key of one part takes
     * the whole text (a name with spaces included), a key of several parts one value per word.
     *
     * @param rule       the rule
     * @param text       the values
     * @param ipv6Prefix the bits an IPv6 address is counted by
     * @return the key
     * @throws IllegalArgumentException as {@link #keyOf(RuleSettings, List, int)}
     */
    public static String keyOf(RuleSettings rule, String text, int ipv6Prefix) {
        long parts = rule.key().parts().stream().filter(p -> p.kind() != KeySpec.Kind.GLOBAL).count();
        String trimmed = text == null ? "" : text.strip();
        List<String> values = parts == 1 ? List.of(trimmed) : trimmed.isEmpty() ? List.of() : List.of(trimmed.split("\\s+"));
        return keyOf(rule, values, ipv6Prefix);
    }

    private static String value(RuleSettings rule, KeySpec.Part part, String value, int ipv6Prefix) {
        String cased = rule.lowercaseKey() ? value.toLowerCase(Locale.ROOT) : value;
        return switch (part.kind()) {
            case IP -> "ip:" + KeyValues.safe(address(rule, value, ipv6Prefix));
            case PRINCIPAL -> "user:" + present(rule, part, cased);
            case PRINCIPAL_OR_IP -> principalOrIp(rule, value, ipv6Prefix);
            case PATH -> "path:" + KeyValues.safe(path(rule, part, value));
            case HEADER -> "header." + part.name().toLowerCase(Locale.ROOT) + ":" + present(rule, part, cased);
            case PARAM -> "param." + part.name() + ":" + present(rule, part, cased);
            case GLOBAL -> "global";
        };
    }

    private static String principalOrIp(RuleSettings rule, String value, int ipv6Prefix) {
        if (value.startsWith("user:")) {
            String name = value.substring("user:".length());
            return "user:" + present(rule, new KeySpec.Part(KeySpec.Kind.PRINCIPAL, ""),
                    rule.lowercaseKey() ? name.toLowerCase(Locale.ROOT) : name);
        }
        String address = value.startsWith("ip:") ? value.substring("ip:".length()) : value;
        if (value.startsWith("ip:") || IpAddress.parse(address).isPresent()) {
            return "ip:" + KeyValues.safe(address(rule, address, ipv6Prefix));
        }
        return principalOrIp(rule, "user:" + value, ipv6Prefix);
    }

    /**
     * A path as {@code ratelimit explain} reads PATH: as sent (an access log's) or typed decoded,
     * read as the container reads it ({@link RequestPath}), the path the filter keyed by.
     */
    private static String path(RuleSettings rule, KeySpec.Part part, String value) {
        present(rule, part, value); // an empty one refused as any part's
        try {
            return RequestPath.canonical(value);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("rule '" + rule.rule().name() + "' has key " + rule.key() + ": the path "
                    + e.getMessage());
        }
    }

    /** An address as the filter counts it: the client address resolver's own form of a peer. */
    private static String address(RuleSettings rule, String value, int ipv6Prefix) {
        if (IpAddress.parse(value).isEmpty()) {
            throw new IllegalArgumentException("rule '" + rule.rule().name() + "' has key " + rule.key() + ": '" + value
                    + "' is not an IP address");
        }
        return new ClientAddressResolver(List.of(), "X-Forwarded-For", ipv6Prefix).resolve(value, null);
    }

    private static String present(RuleSettings rule, KeySpec.Part part, String value) {
        if (value.isEmpty()) {
            throw new IllegalArgumentException("rule '" + rule.rule().name() + "' has key " + rule.key() + ": the value for "
                    + part.text() + " is empty (a request without one is not counted)");
        }
        return KeyValues.safe(value);
    }
}
