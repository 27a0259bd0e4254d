package dev.ratelimit.net;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Finds the client's address: the peer's, unless the peer is a trusted proxy. Only then is the
 * forwarding header read, walking its hops right to left past trusted proxies; the first
 * untrusted address is the client. A forwarding header from an untrusted peer is ignored:
 * anybody can write one.
 *
 * <p>Parsing is linear in the header's length and never throws: a hop that is not an address
 * (garbage, {@code unknown}, an obfuscated RFC 7239 node) ends the walk, and the last trusted
 * hop, the proxy that passed it on, stands for the client.
 *
 * <p>It works on the request's peer address and header lines alone, so that the filter and the
 * command line's {@code explain} resolve a client by the same code.
 */
public final class ClientAddressResolver {

    /** Hops examined at most: more trusted proxies than this in a row is not a real network. */
    private static final int MAX_HOPS = 64;

    private final List<Cidr> trustedProxies;
    private final String header;
    private final boolean rfc7239;
    private final int ipv6Prefix;

    /**
     * A resolver for one reading of the settings.
     *
     * @param trustedProxies peers whose forwarding headers are believed ({@code ratelimit.trusted-proxies})
     * @param header         the forwarding header ({@code ratelimit.client-ip-header}); {@code Forwarded}
     *                       is read as RFC 7239, any other as one address per hop
     * @param ipv6Prefix     IPv6 clients are counted per network of this many bits
     */
    public ClientAddressResolver(List<Cidr> trustedProxies, String header, int ipv6Prefix) {
        this.trustedProxies = List.copyOf(trustedProxies);
        this.header = header;
        this.rfc7239 = header.equalsIgnoreCase("Forwarded");
        this.ipv6Prefix = ipv6Prefix;
    }

    /**
     * The client address as used in keys: canonical text, IPv6 aggregated to the configured
     * prefix ({@code 2001:db8:1:2::/64}).
     *
     * @param remoteAddr the peer's address ({@code getRemoteAddr()})
     * @param headers    the values of every line of the forwarding header, in order
     * @return the client's address; the peer's text as-is if it is not an IP (a Unix socket)
     */
    public String resolve(String remoteAddr, Enumeration<String> headers) {
        if (trustedProxies.isEmpty() && IpAddress.isCanonicalIpv4(remoteAddr)) {
            // No proxy is trusted, so the peer is the client; and a canonical dotted quad is
            // already the text keys use: nothing to parse or format for every request.
            return remoteAddr;
        }
        Optional<IpAddress> peer = IpAddress.parse(remoteAddr);
        if (peer.isEmpty()) {
            return remoteAddr == null || remoteAddr.isEmpty() ? "unknown" : remoteAddr;
        }
        IpAddress client = peer.get();
        if (trusted(client) && headers != null) {
            List<String> hops = hops(headers);
            for (int i = hops.size() - 1; i >= 0 && hops.size() - i <= MAX_HOPS; i--) {
                Optional<IpAddress> hop = parseHop(hops.get(i));
                if (hop.isEmpty()) {
                    break;
                }
                client = hop.get();
                if (!trusted(client)) {
                    break;
                }
            }
        }
        return format(client);
    }

    /**
     * Whether the peer itself is a trusted proxy, whose headers (a forwarding header, a plan
     * header) can be believed.
     *
     * @param remoteAddr the peer's address ({@code getRemoteAddr()})
     * @return true for an address in {@code ratelimit.trusted-proxies}
     */
    public boolean isTrustedPeer(String remoteAddr) {
        Optional<IpAddress> peer = IpAddress.parse(remoteAddr);
        return peer.isPresent() && trusted(peer.get());
    }

    private boolean trusted(IpAddress address) {
        for (Cidr cidr : trustedProxies) {
            if (cidr.contains(address)) {
                return true;
            }
        }
        return false;
    }

    private String format(IpAddress address) {
        if (address.isIpv6() && ipv6Prefix < 128) {
            return address.mask(ipv6Prefix) + "/" + ipv6Prefix;
        }
        return address.toString();
    }

    /**
     * Every hop, in order, from all lines of the header, split at every comma. Quotes are not
     * honoured here: a quote the client left open would otherwise swallow the hops the proxies
     * append after it, and the client would choose its own address. No value this reads (an
     * address, {@code unknown}, an obfuscated node) holds a comma; an element that quoted one
     * elsewhere becomes pieces that are not addresses, which end the walk at the last trusted hop.
     */
    private List<String> hops(Enumeration<String> headers) {
        List<String> hops = new ArrayList<>();
        for (String line : Collections.list(headers)) {
            if (line == null) {
                continue;
            }
            int start = 0;
            for (int comma = line.indexOf(','); comma >= 0; comma = line.indexOf(',', start)) {
                hops.add(line.substring(start, comma));
                start = comma + 1;
            }
            hops.add(line.substring(start));
        }
        return hops;
    }

    private Optional<IpAddress> parseHop(String hop) {
        String value = rfc7239 ? forParameter(hop) : hop.trim();
        if (value == null) {
            return Optional.empty();
        }
        return IpAddress.parse(stripPort(value));
    }

    /** The {@code for=} value of one RFC 7239 element, unquoted; null when absent. */
    private static String forParameter(String element) {
        int start = 0;
        while (start < element.length()) {
            int end = indexOfOutsideQuotes(element, ';', start);
            String pair = element.substring(start, end).trim();
            int eq = pair.indexOf('=');
            if (eq > 0 && pair.substring(0, eq).trim().toLowerCase(Locale.ROOT).equals("for")) {
                String value = pair.substring(eq + 1).trim();
                if (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")) {
                    value = value.substring(1, value.length() - 1).replace("\\", "");
                }
                return value;
            }
            start = end + 1;
        }
        return null;
    }

    private static int indexOfOutsideQuotes(String s, char target, int from) {
        boolean quoted = false;
        for (int i = from; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"') {
                quoted = !quoted;
            } else if (c == target && !quoted) {
                return i;
            }
        }
        return s.length();
    }

    /**
     * {@code [2001:db8::1]:4711} → {@code 2001:db8::1}; {@code 192.0.2.1:80} → {@code 192.0.2.1}.
     * Only a port of digits goes: {@code 192.0.2.1:"} stays as it is, no address.
     */
    private static String stripPort(String value) {
        String v = value.trim();
        if (v.startsWith("[")) {
            int close = v.indexOf(']');
            return close > 0 && (close == v.length() - 1 || isPort(v, close + 1)) ? v.substring(1, close) : v;
        }
        int colon = v.indexOf(':');
        if (colon > 0 && colon == v.lastIndexOf(':') && isPort(v, colon)) {
            return v.substring(0, colon); // one colon: IPv4 with a port (IPv6 has several)
        }
        return v;
    }

    /** Whether {@code v} from {@code colon} on is {@code :} and one to five digits. */
    private static boolean isPort(String v, int colon) {
        int digits = v.length() - colon - 1;
        if (v.charAt(colon) != ':' || digits < 1 || digits > 5) {
            return false;
        }
        for (int i = colon + 1; i < v.length(); i++) {
            if (v.charAt(i) < '0' || v.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }
}
