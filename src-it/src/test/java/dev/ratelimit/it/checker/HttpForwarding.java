package dev.ratelimit.it.checker;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * Client addresses over HTTP: the forwarding settings of a run, the {@code X-Forwarded-For} and
 * {@code Forwarded} headers its requests send (honest ones through trusted proxies, and spoofed
 * ones: hops a client wrote itself, a header from a peer that is no trusted proxy, the header the
 * settings do not name), and the checker's own reading of them, as the README's <i>Security</i>
 * section says the filter reads them, written here without the filter's code:
 * <ul>
 *   <li>the client is the peer, unless the peer is a trusted proxy;</li>
 *   <li>only then is the header named by {@code ratelimit.client-ip-header} read (every line, in
 *       order), its hops walked right to left past trusted proxies: the first untrusted address is
 *       the client; a hop that is not an address ends the walk at the proxy that passed it on (and
 *       a header of trusted hops only leaves the leftmost);</li>
 *   <li>an IPv6 client is counted per network of {@code ratelimit.ipv6-prefix} bits, written
 *       {@code 2001:db8:1:2::/64} (RFC 5952 text of the network), or as the address itself at
 *       128; an IPv4-mapped IPv6 address is the IPv4 address.</li>
 * </ul>
 *
 * <p>Every address a run can resolve to is its own (the peers' and clients' numbers hold the
 * seed's slot): the filter's deny cache and the provider's answers outlive a run, and a key must
 * not carry over into another seed.
 */
final class HttpForwarding {

    private HttpForwarding() {
    }

    /** The two headers a request may send; the settings name one. */
    static final List<String> HEADERS = List.of("X-Forwarded-For", "Forwarded");

    /**
     * A run's forwarding settings and the addresses of its peers.
     *
     * @param header     {@code ratelimit.client-ip-header}
     * @param ipv6Prefix {@code ratelimit.ipv6-prefix}
     * @param slot       the seed's slot, 0 to 59,999, in every address of the run
     */
    record Network(String header, int ipv6Prefix, int slot) {

        /** {@code ratelimit.trusted-proxies}: the loopback peers 127.0.x.x, 10/8, and the run's own IPv6 proxies. */
        String trustedProxies() {
            return "127.0.0.0/16, 10.0.0.0/8, " + v6(slot, 0xff00, 0, 0) + "/56";
        }

        /** The trusted proxy's address, the peer a request "from trusted" comes from. */
        String trustedPeer() {
            return "127.0." + (2 + slot / 250) + "." + (1 + slot % 250);
        }

        /** The address of a peer that is no trusted proxy. */
        String untrustedPeer() {
            return "127.1." + (2 + slot / 250) + "." + (1 + slot % 250);
        }
    }

    /**
     * One hop of a forwarding header.
     *
     * @param text    as sent (an address in one of its spellings, or not an address)
     * @param address the address it spells, IPv4 dotted or IPv6 as eight full groups; null when it spells none
     * @param trusted whether the address is in the run's trusted proxies
     */
    record Hop(String text, String address, boolean trusted) {
    }

    /**
     * A forwarding header as sent.
     *
     * @param name  its name
     * @param lines its lines, each a list of hops joined by commas
     */
    record Header(String name, List<List<Hop>> lines) {

        /** The lines as the client writes them. */
        List<String> text() {
            List<String> out = new ArrayList<>();
            for (List<Hop> line : lines) {
                out.add(String.join(", ", line.stream().map(Hop::text).toList()));
            }
            return out;
        }
    }

    /** A run's settings: the header, an IPv6 prefix (mostly the default 64), and the seed's slot. */
    static Network network(Random random, long seed) {
        int[] prefixes = {64, 64, 56, 48, 128};
        return new Network(HEADERS.get(random.nextInt(2)), prefixes[random.nextInt(prefixes.length)],
                (int) Math.floorMod(seed, 60_000L));
    }

    /**
     * The forwarding headers of one request: none, the named one, the other one or both, each a
     * chain of what the client wrote itself (spoofed hops, now and then), the client, and the
     * trusted proxies it went through; now and then a hop that is not an address, or two lines.
     */
    static List<Header> headers(Random random, Network network) {
        List<Header> headers = new ArrayList<>();
        int which = random.nextInt(6);
        if (which == 0) {
            return headers;
        }
        for (String name : HEADERS) {
            boolean named = name.equals(network.header());
            if (which <= 3 && named || which == 4 && !named || which == 5) {
                headers.add(new Header(name, lines(random, chain(random, network.slot()), name.equals("Forwarded"))));
            }
        }
        return headers;
    }

    /** Hops from left (farthest) to right (nearest): spoofed ones, the client, the trusted proxies. */
    private static List<String[]> chain(Random random, int slot) {
        List<String[]> chain = new ArrayList<>();
        // What the client wrote itself: other clients' addresses, or a trusted proxy's.
        for (int i = random.nextInt(4) == 0 ? 1 + random.nextInt(2) : 0; i > 0; i--) {
            chain.add(random.nextInt(4) == 0 ? proxy(random, slot) : client(random, slot));
        }
        if (random.nextInt(8) != 0) {
            chain.add(client(random, slot)); // else the proxy is the farthest hop known
        }
        if (random.nextInt(10) == 0) {
            chain.add(new String[] {null, "false"}); // not an address: the walk ends at the hop after it
        }
        for (int i = random.nextInt(3); i > 0; i--) {
            chain.add(proxy(random, slot));
        }
        if (chain.isEmpty()) {
            chain.add(client(random, slot));
        }
        return chain;
    }

    /** An untrusted address of the run: one of eight IPv4 (in 100.64.0.0/10) or six IPv6 networks' hosts. */
    private static String[] client(Random random, int slot) {
        if (random.nextBoolean()) {
            int v = 0x64400000 + slot * 8 + random.nextInt(8);
            return new String[] {(v >>> 24) + "." + (v >>> 16 & 0xff) + "." + (v >>> 8 & 0xff) + "." + (v & 0xff),
                "false"};
        }
        // Subnets 1 and 2 share a /56, 0x100 is another /56; all three share the seed's /48.
        int[] subnets = {1, 2, 0x100};
        int[] hosts = {1, 0xabc, 0xffff};
        return new String[] {v6(slot, subnets[random.nextInt(3)], random.nextInt(2) * 0x42, hosts[random.nextInt(3)]),
            "false"};
    }

    /** A trusted proxy of the run: IPv4 in 10/8, or IPv6 in its own /56. */
    private static String[] proxy(Random random, int slot) {
        if (random.nextBoolean()) {
            return new String[] {"10." + (slot >>> 8) + "." + (slot & 0xff) + "." + (1 + random.nextInt(3)), "true"};
        }
        return new String[] {v6(slot, 0xff00, 0, 1 + random.nextInt(3)), "true"};
    }

    /** 2001:db8:slot:subnet:0:0:middle:host, eight full groups. */
    private static String v6(int slot, int subnet, int middle, int host) {
        return String.format(Locale.ROOT, "2001:db8:%x:%x:0:0:%x:%x", slot, subnet, middle, host);
    }

    /** The chain spelled as one header: on one line, or on two now and then. */
    private static List<List<Hop>> lines(Random random, List<String[]> chain, boolean rfc7239) {
        List<Hop> hops = new ArrayList<>();
        for (String[] hop : chain) {
            hops.add(new Hop(spell(random, hop[0], rfc7239), hop[0], Boolean.parseBoolean(hop[1])));
        }
        if (hops.size() > 1 && random.nextInt(4) == 0) {
            int cut = 1 + random.nextInt(hops.size() - 1);
            return List.of(List.copyOf(hops.subList(0, cut)), List.copyOf(hops.subList(cut, hops.size())));
        }
        return List.of(List.copyOf(hops));
    }

    /** One hop's text: an address in one of its spellings, or something that is no address. */
    private static String spell(Random random, String address, boolean rfc7239) {
        if (address == null) {
            // Also an address with a quote the client left open: it must not swallow the hops
            // the proxies append after it on the same line.
            String[] none = rfc7239 ? new String[] {"for=unknown", "for=_hidden", "proto=https", "for=\"100.64.0.1:"}
                    : new String[] {"unknown", "not-an-address", "_hidden", "100.64.0.1:\""};
            return none[random.nextInt(none.length)];
        }
        boolean v6 = address.contains(":");
        String text = switch (random.nextInt(4)) {
            case 0 -> address; // IPv6 uncompressed
            case 1 -> v6 ? address.toUpperCase(Locale.ROOT) : "::ffff:" + address; // IPv4-mapped
            default -> v6 ? rfc5952(address) : address;
        };
        if (!rfc7239) {
            return text;
        }
        boolean mapped = text.startsWith("::ffff:");
        String value = switch (random.nextInt(3)) {
            case 0 -> v6 || mapped ? "\"[" + text + "]\"" : text;
            case 1 -> v6 || mapped ? "\"[" + text + "]:4711\"" : "\"" + text + ":8080\"";
            default -> "\"" + (v6 || mapped ? "[" + text + "]" : text) + "\"";
        };
        String pair = (random.nextInt(4) == 0 ? "For=" : "for=") + value;
        return switch (random.nextInt(4)) {
            case 0 -> pair + ";proto=https";
            case 1 -> "by=\"[2001:db8::9]\";" + pair;
            default -> pair;
        };
    }

    /**
     * The client as the README says the filter finds it, as a key writes it.
     *
     * @param network     the run's settings
     * @param fromTrusted whether the peer is the trusted proxy (else the untrusted peer)
     * @param headers     the forwarding headers sent
     * @return the address: IPv4 dotted, an IPv6 network with its prefix, or an IPv6 address at 128
     */
    static String client(Network network, boolean fromTrusted, List<Header> headers) {
        String peer = fromTrusted ? network.trustedPeer() : network.untrustedPeer();
        if (!fromTrusted) {
            return peer;
        }
        List<Hop> hops = new ArrayList<>();
        for (Header header : headers) {
            if (header.name().equalsIgnoreCase(network.header())) {
                header.lines().forEach(hops::addAll);
            }
        }
        String client = peer;
        for (int i = hops.size() - 1; i >= 0; i--) {
            Hop hop = hops.get(i);
            if (hop.address() == null) {
                break;
            }
            client = hop.address();
            if (!hop.trusted()) {
                break;
            }
        }
        return keyed(client, network.ipv6Prefix());
    }

    /** An address as a key holds it: IPv4 as is, IPv6 as its network (RFC 5952) and prefix, or itself at 128. */
    static String keyed(String address, int prefix) {
        if (!address.contains(":")) {
            return address;
        }
        String[] groups = address.split(":");
        StringBuilder masked = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            int group = Integer.parseInt(groups[i], 16);
            int keep = Math.max(0, Math.min(16, prefix - 16 * i));
            group &= keep == 0 ? 0 : 0xffff << (16 - keep) & 0xffff;
            masked.append(i == 0 ? "" : ":").append(Integer.toHexString(group));
        }
        String text = rfc5952(masked.toString());
        return prefix < 128 ? text + "/" + prefix : text;
    }

    /** Eight full groups written as RFC 5952 says: lower case, the longest run of two or more zero groups (the first of equals) as "::". */
    static String rfc5952(String full) {
        String[] groups = full.toLowerCase(Locale.ROOT).split(":");
        int bestStart = -1;
        int bestLength = 1;
        for (int i = 0; i < 8; i++) {
            int j = i;
            while (j < 8 && Integer.parseInt(groups[j], 16) == 0) {
                j++;
            }
            if (j - i > bestLength) {
                bestStart = i;
                bestLength = j - i;
            }
        }
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            parts.add(Integer.toHexString(Integer.parseInt(groups[i], 16)));
        }
        if (bestStart < 0) {
            return String.join(":", parts);
        }
        return String.join(":", parts.subList(0, bestStart)) + "::"
                + String.join(":", parts.subList(bestStart + bestLength, 8));
    }
}
