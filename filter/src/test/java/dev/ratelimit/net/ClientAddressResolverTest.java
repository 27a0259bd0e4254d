package dev.ratelimit.net;

import org.junit.jupiter.api.Test;

import java.util.Collections;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ClientAddressResolverTest {

    private static final List<Cidr> PROXIES = List.of(Cidr.parse("10.0.0.0/8").orElseThrow(),
            Cidr.parse("2001:db8:ffff::/48").orElseThrow());

    private final ClientAddressResolver xff = new ClientAddressResolver(PROXIES, "X-Forwarded-For", 64);
    private final ClientAddressResolver forwarded = new ClientAddressResolver(PROXIES, "Forwarded", 128);

    private static String resolve(ClientAddressResolver resolver, String peer, String... lines) {
        return resolver.resolve(peer, Collections.enumeration(List.of(lines)));
    }

    @Test
    void anUntrustedPeerIsTheClientWhateverItsHeadersSay() {
        assertThat(resolve(xff, "198.51.100.7", "203.0.113.9")).isEqualTo("198.51.100.7");
        assertThat(resolve(forwarded, "198.51.100.7", "for=203.0.113.9")).isEqualTo("198.51.100.7");
    }

    /**
     * With no proxy trusted the peer is the client, its address in the one text keys use however
     * the container wrote it: a canonical dotted quad taken as it is gives what parsing gives.
     */
    @Test
    void withNoTrustedProxyThePeerIsTheClientInCanonicalText() {
        ClientAddressResolver none = new ClientAddressResolver(List.of(), "X-Forwarded-For", 64);
        assertThat(resolve(none, "203.0.113.9", "198.51.100.7")).isEqualTo("203.0.113.9");
        assertThat(resolve(none, " 203.0.113.9 ", "198.51.100.7")).isEqualTo("203.0.113.9");
        assertThat(resolve(none, "[203.0.113.9]")).isEqualTo("203.0.113.9");
        assertThat(resolve(none, "::ffff:203.0.113.9")).isEqualTo("203.0.113.9");
        assertThat(resolve(none, "2001:DB8:0:0:1:2:3:4")).isEqualTo("2001:db8::/64");
        assertThat(resolve(none, "/tmp/socket")).isEqualTo("/tmp/socket");
        assertThat(resolve(none, "")).isEqualTo("unknown");
    }

    @Test
    void aTrustedProxyIsWalkedPastRightToLeft() {
        assertThat(resolve(xff, "10.0.0.1", "203.0.113.9")).isEqualTo("203.0.113.9");
        // The client wrote a fake first hop; the proxies appended the real ones.
        assertThat(resolve(xff, "10.0.0.1", "1.1.1.1, 203.0.113.9, 10.0.0.2")).isEqualTo("203.0.113.9");
        // Several header lines are one list.
        assertThat(resolve(xff, "10.0.0.1", "1.1.1.1, 203.0.113.9", "10.0.0.3")).isEqualTo("203.0.113.9");
        // All hops trusted: the leftmost is the best we know.
        assertThat(resolve(xff, "10.0.0.1", "10.0.0.5, 10.0.0.6")).isEqualTo("10.0.0.5");
        // No header: the proxy itself.
        assertThat(xff.resolve("10.0.0.1", Collections.emptyEnumeration())).isEqualTo("10.0.0.1");
    }

    @Test
    void garbageEndsTheWalkAtTheLastTrustedHop() {
        assertThat(resolve(xff, "10.0.0.1", "203.0.113.9, not-an-ip")).isEqualTo("10.0.0.1");
        assertThat(resolve(xff, "10.0.0.1", "")).isEqualTo("10.0.0.1");
        assertThat(resolve(xff, "10.0.0.1", "203.0.113.9:8080")).isEqualTo("203.0.113.9");
    }

    @Test
    void rfc7239QuotedValuesPortsAndObfuscatedNodes() {
        assertThat(resolve(forwarded, "10.0.0.1", "for=192.0.2.60;proto=http;by=203.0.113.43")).isEqualTo("192.0.2.60");
        assertThat(resolve(forwarded, "10.0.0.1", "for=\"[2001:db8:cafe::17]:4711\"")).isEqualTo("2001:db8:cafe::17");
        assertThat(resolve(forwarded, "10.0.0.1", "For=\"198.51.100.17\", for=10.0.0.9")).isEqualTo("198.51.100.17");
        assertThat(resolve(forwarded, "10.0.0.1", "for=unknown")).isEqualTo("10.0.0.1");
        assertThat(resolve(forwarded, "10.0.0.1", "for=_hidden, for=10.0.0.2")).isEqualTo("10.0.0.2");
        assertThat(resolve(forwarded, "10.0.0.1", "for=\"a,b\";by=x, for=192.0.2.1")).isEqualTo("192.0.2.1");
    }

    @Test
    void aQuoteTheClientLeftOpenDoesNotSwallowTheHopsTheProxiesAppend() {
        // The client sent `1.2.3.4:"`; the trusted proxy appended its peer, 203.0.113.9.
        assertThat(resolve(xff, "10.0.0.1", "1.2.3.4:\", 203.0.113.9")).isEqualTo("203.0.113.9");
        assertThat(resolve(xff, "10.0.0.1", "1.2.3.4:\", 203.0.113.9, 10.0.0.2")).isEqualTo("203.0.113.9");
        assertThat(resolve(xff, "10.0.0.1", "\", 203.0.113.9")).isEqualTo("203.0.113.9");
        assertThat(resolve(forwarded, "10.0.0.1", "for=\"1.2.3.4:, for=\"203.0.113.9\"")).isEqualTo("203.0.113.9");
        assertThat(resolve(forwarded, "10.0.0.1", "for=\"1.2.3.4:", "for=203.0.113.9")).isEqualTo("203.0.113.9");
        // Alone, the proxy's peer wrote it: no address, the proxy stands for the client.
        assertThat(resolve(xff, "10.0.0.1", "1.2.3.4:\"")).isEqualTo("10.0.0.1");
        assertThat(resolve(xff, "10.0.0.1", "1.2.3.4:x")).isEqualTo("10.0.0.1");
        assertThat(resolve(xff, "10.0.0.1", "[2001:db8::1]x")).isEqualTo("10.0.0.1");
        assertThat(resolve(xff, "10.0.0.1", "[2001:db8::1]:443")).isEqualTo("2001:db8::/64");
    }

    @Test
    void ipv6ClientsAreCountedPerConfiguredPrefix() {
        assertThat(resolve(xff, "2001:db8:1:2:3:4:5:6")).isEqualTo("2001:db8:1:2::/64");
        assertThat(resolve(xff, "::ffff:198.51.100.7")).isEqualTo("198.51.100.7");
        assertThat(resolve(xff, "2001:db8:ffff::1", "2001:db8:1:2::99")).isEqualTo("2001:db8:1:2::/64");
    }
}
