package dev.ratelimit.config;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A request path as sent on the wire or written in an access log ({@code /p/A%20b;jsessionid=1})
 * read into the path the filter matches and keys by ({@code /p/A b}): the Servlet 6.0
 * specification's URI path canonicalization (§3.5.2), which the container applies before it
 * dispatches and before any filter runs. Path parameters ({@code ;...}) are removed from each
 * segment, {@code %nn} decoded as UTF-8, empty segments but the last removed, {@code .} and
 * {@code ..} segments resolved; the query is dropped. What the specification calls suspicious is
 * refused, as the container refuses it with 400 Bad Request: a fragment, an encoded {@code /}, a
 * {@code \}, a control character, a bad {@code %} sequence or UTF-8, a {@code ..} above the root,
 * a dot segment encoded or with a parameter, an empty segment with a parameter.
 *
 * <p>The filter itself never calls this: it takes the path the container read
 * ({@link RequestView#path()}). This is that reading for the paths an operator types, in
 * {@code ratelimit explain} and as the value of a {@code path} key part, so that the key named
 * is the key the filter builds. A character that cannot be sent as it is ({@code /p/A b},
 * {@code /café}) is taken as itself: a path may be typed decoded, except that a {@code %} must
 * then be written {@code %25}. Containers differ where the specification lets them: Jetty 12
 * also refuses {@code //} and {@code %25}, and Tomcat 11 dispatches some sequences refused here
 * (an encoded dot segment, {@code ..;}).
 */
public final class RequestPath {

    private RequestPath() {
    }

    /**
     * The path a container dispatches for a request-target's path.
     *
     * @param target the path as sent, with or without its query, e.g. {@code /api/items;jsessionid=1?page=2}
     * @return the canonical path, at least {@code /}, e.g. {@code /api/items}
     * @throws IllegalArgumentException saying why a container answers 400 Bad Request instead
     */
    public static String canonical(String target) {
        if (target.indexOf('#') >= 0) {
            throw refused(target, "has a fragment ('#')");
        }
        int query = target.indexOf('?');
        String path = query < 0 ? target : target.substring(0, query);
        if (!path.startsWith("/")) {
            throw refused(target, "does not start with '/'");
        }
        // In a path parameter too, which is dropped before decoding.
        if (path.toLowerCase(Locale.ROOT).contains("%2f")) {
            throw refused(target, "has an encoded '/' (%2F)");
        }
        if (path.indexOf('\\') >= 0) {
            throw refused(target, "has a '\\' (or %5C)");
        }
        String[] raw = path.substring(1).split("/", -1);
        List<String> segments = new ArrayList<>();
        for (int i = 0; i < raw.length; i++) {
            boolean last = i == raw.length - 1;
            int semicolon = raw[i].indexOf(';');
            boolean parameters = semicolon >= 0;
            String encoded = parameters ? raw[i].substring(0, semicolon) : raw[i];
            String segment = decode(target, encoded);
            if (segment.isEmpty()) {
                if (parameters && !last) {
                    throw refused(target, "has an empty segment with a path parameter (/;...)");
                }
                if (last) {
                    segments.add(segment);
                }
                continue;
            }
            boolean dots = segment.equals(".") || segment.equals("..");
            if (dots && parameters) {
                throw refused(target, "has a '" + segment + "' segment with a path parameter");
            }
            if (dots && !encoded.equals(segment)) {
                throw refused(target, "has an encoded dot segment (%2e)");
            }
            if (segment.equals("..")) {
                if (segments.isEmpty()) {
                    throw refused(target, "goes above the root with '..'");
                }
                segments.remove(segments.size() - 1);
            } else if (!segment.equals(".")) {
                segments.add(segment);
            }
        }
        return "/" + String.join("/", segments);
    }

    /** A segment's {@code %nn} decoded as UTF-8; anything else taken as its own UTF-8. */
    private static String decode(String target, String segment) {
        if (segment.indexOf('%') < 0) {
            return checked(target, segment);
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(segment.length());
        for (int i = 0; i < segment.length(); i++) {
            char c = segment.charAt(i);
            if (c != '%') {
                byte[] own = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
                // A surrogate pair is one character in two chars: encoded together.
                if (Character.isHighSurrogate(c) && i + 1 < segment.length()) {
                    own = segment.substring(i, i + 2).getBytes(StandardCharsets.UTF_8);
                    i++;
                }
                bytes.writeBytes(own);
                continue;
            }
            int high = i + 2 < segment.length() ? hex(segment.charAt(i + 1)) : -1;
            int low = high < 0 ? -1 : hex(segment.charAt(i + 2));
            if (low < 0) {
                throw refused(target, "has a '%' not followed by two hexadecimal digits (write '%' as %25)");
            }
            bytes.write(high * 16 + low);
            i += 2;
        }
        try {
            return checked(target, StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes.toByteArray())).toString());
        } catch (CharacterCodingException e) {
            throw refused(target, "has %nn sequences that are not UTF-8");
        }
    }

    /** An ASCII hexadecimal digit's value, or -1 (Character.digit would take other scripts' digits). */
    private static int hex(char c) {
        return c < 128 ? Character.digit(c, 16) : -1;
    }

    /** The segment, unless it holds what no container dispatches. */
    private static String checked(String target, String segment) {
        if (segment.indexOf('/') >= 0) {
            throw refused(target, "has an encoded '/' (%2F)");
        }
        if (segment.indexOf('\\') >= 0) {
            throw refused(target, "has a '\\' (or %5C)");
        }
        // C0 and DEL, as Jetty and Tomcat refuse them; both dispatch C1 characters.
        if (segment.chars().anyMatch(c -> c < 0x20 || c == 0x7F)) {
            throw refused(target, "has a control character (%00 to %1F, or %7F)");
        }
        return segment;
    }

    private static IllegalArgumentException refused(String target, String why) {
        return new IllegalArgumentException("'" + target + "' " + why + ": a servlet container answers 400 Bad Request"
                + " (Servlet 6.0, §3.5.2) and no filter sees the request");
    }
}
