package dev.ratelimit.it.checker;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The checker's own reading of client addresses ({@link HttpForwarding}) on the README's examples. */
class HttpForwardingTest {

    private static final HttpForwarding.Network XFF = new HttpForwarding.Network("X-Forwarded-For", 64, 7);

    private static HttpForwarding.Hop client(String address) {
        return new HttpForwarding.Hop(address, address, false);
    }

    private static HttpForwarding.Hop proxy(String address) {
        return new HttpForwarding.Hop(address, address, true);
    }

    private static HttpForwarding.Header header(String name, HttpForwarding.Hop... hops) {
        return new HttpForwarding.Header(name, List.of(List.of(hops)));
    }

    @Test
    void ipv6IsCountedPerNetworkInRfc5952Text() {
        assertThat(HttpForwarding.keyed("2001:db8:1:2:0:0:0:1", 64)).isEqualTo("2001:db8:1:2::/64");
        assertThat(HttpForwarding.keyed("2001:db8:1:2ff:0:0:0:1", 56)).isEqualTo("2001:db8:1:200::/56");
        assertThat(HttpForwarding.keyed("2001:db8:1:2:0:0:0:1", 128)).isEqualTo("2001:db8:1:2::1");
        assertThat(HttpForwarding.keyed("100.64.0.9", 64)).isEqualTo("100.64.0.9");
        // The first of two equally long zero runs is the one compressed; a single zero group is not.
        assertThat(HttpForwarding.rfc5952("2001:db8:0:0:1:0:0:1")).isEqualTo("2001:db8::1:0:0:1");
        assertThat(HttpForwarding.rfc5952("2001:DB8:0:1:1:1:1:1")).isEqualTo("2001:db8:0:1:1:1:1:1");
    }

    @Test
    void theHopsAreWalkedFromTheRightPastTrustedProxies() {
        HttpForwarding.Header spoofed = header("X-Forwarded-For", client("100.64.0.1"), client("100.64.0.2"),
                proxy("10.0.0.1"));
        assertThat(HttpForwarding.client(XFF, true, List.of(spoofed))).isEqualTo("100.64.0.2");
        // From a peer that is no trusted proxy, any header is ignored.
        assertThat(HttpForwarding.client(XFF, false, List.of(spoofed))).isEqualTo(XFF.untrustedPeer());
        // Only the header the settings name is read.
        assertThat(HttpForwarding.client(XFF, true, List.of(header("Forwarded", client("100.64.0.1")))))
                .isEqualTo(XFF.trustedPeer());
        // A hop that is no address ends the walk at the proxy that passed it on.
        HttpForwarding.Header junk = header("X-Forwarded-For", client("100.64.0.1"),
                new HttpForwarding.Hop("unknown", null, false), proxy("10.0.0.1"));
        assertThat(HttpForwarding.client(XFF, true, List.of(junk))).isEqualTo("10.0.0.1");
        // Trusted hops only: the farthest one known.
        assertThat(HttpForwarding.client(XFF, true, List.of(header("x-forwarded-for", proxy("10.0.0.2"),
                proxy("10.0.0.1"))))).isEqualTo("10.0.0.2");
    }
}
