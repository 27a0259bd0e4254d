package dev.ratelimit.net;

import java.util.Optional;

/**
 * A network in CIDR notation, {@code 10.0.0.0/8} or {@code 2001:db8::/32}; a bare address is
 * a network of one.
 *
 * @param network      the network address, host bits cleared
 * @param prefixLength bits of the network part
 */
public record Cidr(IpAddress network, int prefixLength) {

    /**
     * Parses CIDR text.
     *
     * @param text e.g. {@code 10.0.0.0/8}, {@code ::1}, {@code 2001:db8::/32}
     * @return the network, or empty when the text is not valid CIDR
     */
    public static Optional<Cidr> parse(String text) {
        String s = text.trim();
        int slash = s.indexOf('/');
        Optional<IpAddress> address = IpAddress.parse(slash < 0 ? s : s.substring(0, slash));
        if (address.isEmpty()) {
            return Optional.empty();
        }
        int bits = address.get().bytes().length * 8;
        int prefix = bits;
        if (slash >= 0) {
            String length = s.substring(slash + 1);
            if (!length.matches("\\d{1,3}")) {
                return Optional.empty();
            }
            prefix = Integer.parseInt(length);
            if (prefix > bits) {
                return Optional.empty();
            }
        }
        return Optional.of(new Cidr(address.get().mask(prefix), prefix));
    }

    /**
     * Whether the address is inside this network.
     *
     * @param address any address
     * @return true when its first {@code prefixLength} bits are the network's
     */
    public boolean contains(IpAddress address) {
        return address.bytes().length == network.bytes().length && address.mask(prefixLength).equals(network);
    }

    @Override
    public String toString() {
        return network + "/" + prefixLength;
    }
}
