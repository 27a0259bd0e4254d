package dev.ratelimit.net;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * An IPv4 or IPv6 address parsed from text without ever asking DNS, in the canonical form
 * used in keys: IPv4 dotted quad; IPv6 lowercase with the longest zero run compressed; an
 * IPv4-mapped IPv6 address ({@code ::ffff:1.2.3.4}) is the IPv4 address it maps.
 *
 * @param bytes 4 or 16 bytes, network order
 */
public record IpAddress(byte[] bytes) {

    private static final Pattern IPV6_CHARS = Pattern.compile("[0-9A-Fa-f:][0-9A-Fa-f:.]{1,44}");

    /**
     * Copies the bytes.
     *
     * @throws IllegalArgumentException unless there are 4 or 16 bytes
     */
    public IpAddress {
        if (bytes.length != 4 && bytes.length != 16) {
            throw new IllegalArgumentException("an IP address has 4 or 16 bytes, not " + bytes.length);
        }
        bytes = bytes.clone();
    }

    /**
     * Parses an IP literal. Accepts IPv4 dotted quads and IPv6 text, with or without
     * brackets; an IPv6 zone ({@code %eth0}) is dropped. Never resolves host names: anything
     * else is empty.
     *
     * @param text the literal, possibly surrounded by spaces
     * @return the address, or empty when the text is not an IP literal
     */
    public static Optional<IpAddress> parse(String text) {
        if (text == null) {
            return Optional.empty();
        }
        String s = text.trim();
        if (s.startsWith("[") && s.endsWith("]")) {
            s = s.substring(1, s.length() - 1);
        }
        int zone = s.indexOf('%');
        if (zone >= 0) {
            s = s.substring(0, zone);
        }
        if (s.indexOf(':') < 0) {
            byte[] b = ipv4(s);
            return b == null ? Optional.empty() : Optional.of(new IpAddress(b));
        }
        // Only now hand it to the JDK: text with a ':', starting with a hex digit or ':' and
        // holding nothing but hex digits, ':' and '.', is parsed as an IPv6 literal and never
        // looked up (the JDK takes text starting otherwise for a host name).
        if (!IPV6_CHARS.matcher(s).matches()) {
            return Optional.empty();
        }
        if (s.indexOf('.') >= 0 && ipv4Bits(s.substring(s.lastIndexOf(':') + 1)) < 0) {
            // An IPv4 tail ("::ffff:192.0.2.1") is held to the dotted quad's own rules: no
            // leading zero here either.
            return Optional.empty();
        }
        try {
            InetAddress address = InetAddress.getByName(s);
            if (address instanceof Inet6Address || address instanceof Inet4Address) {
                return Optional.of(new IpAddress(address.getAddress()));
            }
        } catch (UnknownHostException | SecurityException e) {
            return Optional.empty();
        }
        return Optional.empty();
    }

    /**
     * Whether the text is an IPv4 address written exactly as {@link #toString()} writes it: the
     * client's address as keys use it, with nothing parsed or formatted (no brackets, spaces or
     * zone, no leading zero).
     *
     * @param text any text, or null
     * @return true for a canonical dotted quad
     */
    public static boolean isCanonicalIpv4(String text) {
        return text != null && ipv4Bits(text) >= 0;
    }

    /** The four bytes of a dotted-quad IPv4 address, as {@link #ipv4Bits} reads it; else null. */
    private static byte[] ipv4(String s) {
        long bits = ipv4Bits(s);
        return bits < 0 ? null
                : new byte[] {(byte) (bits >>> 24), (byte) (bits >>> 16), (byte) (bits >>> 8), (byte) bits};
    }

    /**
     * A dotted-quad IPv4 address read by hand (every request's address goes through here): four
     * parts of one to three ASCII digits, each at most 255 and without a leading zero, which some
     * parsers read as octal (the ambiguity is refused). Its 32 bits, or -1 for anything else.
     */
    private static long ipv4Bits(String s) {
        int n = s.length();
        if (n < 7 || n > 15) {
            return -1;
        }
        long bits = 0;
        int part = 0;
        int value = 0;
        int digits = 0;
        for (int i = 0; i <= n; i++) {
            char c = i < n ? s.charAt(i) : '.';
            if (c >= '0' && c <= '9') {
                if (digits == 3 || digits == 1 && value == 0) {
                    return -1;
                }
                value = value * 10 + (c - '0');
                digits++;
            } else if (c == '.' && digits > 0 && value <= 255 && part < 4) {
                bits = bits << 8 | value;
                part++;
                value = 0;
                digits = 0;
            } else {
                return -1;
            }
        }
        return part == 4 ? bits : -1;
    }

    /**
     * The bytes, copied.
     *
     * @return 4 or 16 bytes
     */
    @Override
    public byte[] bytes() {
        return bytes.clone();
    }

    /**
     * Whether this is an IPv6 address (IPv4-mapped ones are IPv4 already).
     *
     * @return true for 16 bytes
     */
    public boolean isIpv6() {
        return bytes.length == 16;
    }

    /**
     * This address with every bit after the first {@code prefixLength} cleared: the network it
     * belongs to, e.g. a /64 for one IPv6 subscriber.
     *
     * @param prefixLength bits to keep, 0 to the address length
     * @return the masked address
     */
    public IpAddress mask(int prefixLength) {
        byte[] masked = bytes.clone();
        for (int bit = prefixLength; bit < masked.length * 8; bit++) {
            masked[bit / 8] &= (byte) ~(0x80 >>> (bit % 8));
        }
        return new IpAddress(masked);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof IpAddress that && Arrays.equals(bytes, that.bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    /**
     * The canonical text: {@code 192.0.2.1}, {@code 2001:db8::1}.
     *
     * @return the address as text
     */
    @Override
    public String toString() {
        if (bytes.length == 4) {
            return (bytes[0] & 0xff) + "." + (bytes[1] & 0xff) + "." + (bytes[2] & 0xff) + "." + (bytes[3] & 0xff);
        }
        int[] groups = new int[8];
        for (int i = 0; i < 8; i++) {
            groups[i] = ((bytes[2 * i] & 0xff) << 8) | (bytes[2 * i + 1] & 0xff);
        }
        // RFC 5952: compress the longest run of two or more zero groups, the first if tied.
        int bestStart = -1;
        int bestLength = 1;
        for (int i = 0; i < 8; ) {
            if (groups[i] != 0) {
                i++;
                continue;
            }
            int j = i;
            while (j < 8 && groups[j] == 0) {
                j++;
            }
            if (j - i > bestLength) {
                bestStart = i;
                bestLength = j - i;
            }
            i = j;
        }
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                text.append("::");
                i += bestLength - 1;
                continue;
            }
            if (text.length() > 0 && text.charAt(text.length() - 1) != ':') {
                text.append(':');
            }
            text.append(Integer.toHexString(groups[i]));
        }
        return text.toString();
    }
}
