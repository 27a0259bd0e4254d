package dev.ratelimit.it.checker;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One HTTP/1.1 request on its own raw socket, so the checker chooses what a real client can do:
 * come from a trusted proxy's address or from another (any of 127.0.0.0/8), read the whole
 * answer, give up after a timeout, reset the connection (SO_LINGER 0) before the answer or in
 * the middle of its body.
 */
final class HttpCall {

    /** How the client behaves. */
    enum Client {
        /** Reads the whole response. */
        READS,
        /** Reads the head, then resets the connection in the middle of the body. */
        HANGS_UP_MID_BODY,
        /** Resets the connection before the head has come. */
        RESETS_EARLY,
        /** Stops waiting after a short time and closes. */
        GIVES_UP
    }

    /**
     * What the client saw.
     *
     * @param status  the status, or -1 when it left before the head
     * @param headers the head's fields, names lower-cased
     * @param body    the body as sent (ISO-8859-1, chunks joined), or null when not read whole
     * @param framing how the body came: "length" (as long as its Content-Length), "chunked", or
     *                what was wrong with it (a length that disagrees, a chunk that does not parse)
     * @param trailers the trailer fields after the last chunk, as sent ("" for none)
     */
    record Seen(int status, Map<String, String> headers, String body, String framing, String trailers) {

        Seen(int status, Map<String, String> headers) {
            this(status, headers, null, null, "");
        }
    }

    private static final int GIVE_UP_MILLIS = 60;
    private static final int RESET_AFTER_MILLIS = 15;

    private HttpCall() {
    }

    /**
     * Sends a GET and behaves as told.
     *
     * @param port    the app's port on 127.0.0.1
     * @param from    the client's own address, on the loopback
     * @param headers extra request fields, name then value (lines split at \n)
     * @param target  path and query
     * @param client  how the client behaves
     * @return what it saw
     */
    static Seen get(int port, String from, String target, Map<String, String> headers, Client client) {
        try (Socket socket = new Socket()) {
            if (client == Client.HANGS_UP_MID_BODY) {
                // A small window: the server blocks on the body soon and sees the reset at its next write.
                socket.setReceiveBufferSize(4096);
            }
            socket.bind(new InetSocketAddress(from, 0));
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            socket.setSoTimeout(client == Client.GIVES_UP ? GIVE_UP_MILLIS
                    : client == Client.RESETS_EARLY ? RESET_AFTER_MILLIS : 20_000);
            StringBuilder request = new StringBuilder("GET ").append(target).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
            // A value of several lines (split at \n) is sent as that many fields of the name.
            headers.forEach((name, value) -> {
                for (String line : value.split("\n", -1)) {
                    request.append(name).append(": ").append(line).append("\r\n");
                }
            });
            request.append("Connection: close\r\n\r\n");
            socket.getOutputStream().write(request.toString().getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            InputStream in = socket.getInputStream();
            String head;
            try {
                head = head(in);
            } catch (SocketTimeoutException e) {
                if (client == Client.RESETS_EARLY) {
                    socket.setSoLinger(true, 0);
                }
                return new Seen(-1, Map.of());
            }
            if (head == null) {
                return new Seen(-1, Map.of());
            }
            Seen seen = parse(head);
            if (client == Client.HANGS_UP_MID_BODY) {
                socket.setSoLinger(true, 0);
                return seen;
            }
            if (client == Client.GIVES_UP) {
                socket.setSoTimeout(20_000);
                in.transferTo(java.io.OutputStream.nullOutputStream());
            }
            if (client == Client.READS) {
                socket.setSoTimeout(20_000);
                return body(seen, in.readAllBytes());
            }
            return seen;
        } catch (IOException e) {
            throw new UncheckedIOException("request " + target + " failed", e);
        }
    }

    /** The body read to the end of the connection (Connection: close), unframed as its head says. */
    private static Seen body(Seen seen, byte[] raw) {
        String sent = new String(raw, StandardCharsets.ISO_8859_1);
        if ("chunked".equalsIgnoreCase(seen.headers().get("transfer-encoding"))) {
            StringBuilder body = new StringBuilder();
            int at = 0;
            while (true) {
                int end = sent.indexOf("\r\n", at);
                int size;
                try {
                    size = end < 0 ? -1 : Integer.parseInt(sent.substring(at, end).split(";")[0].trim(), 16);
                } catch (NumberFormatException e) {
                    size = -1;
                }
                if (size < 0 || end + 2 + size > sent.length()) {
                    return new Seen(seen.status(), seen.headers(), body.toString(), "a chunk that does not parse at "
                            + at + " of " + sent.length() + " bytes", "");
                }
                if (size == 0) {
                    String trailers = sent.substring(end + 2);
                    return new Seen(seen.status(), seen.headers(), body.toString(), "chunked",
                            trailers.endsWith("\r\n") ? trailers.substring(0, trailers.length() - 2) : trailers);
                }
                body.append(sent, end + 2, end + 2 + size);
                at = end + 2 + size + 2;
            }
        }
        String length = seen.headers().get("content-length");
        String framing = length == null ? "no Content-Length and not chunked"
                : length.equals(Integer.toString(raw.length)) ? "length"
                : "a Content-Length of " + length + " for " + raw.length + " bytes";
        return new Seen(seen.status(), seen.headers(), sent, framing, "");
    }

    /** The head up to the empty line, or null if the connection ended first. */
    private static String head(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        while (head.length() < 4 || head.lastIndexOf("\r\n\r\n") != head.length() - 4) {
            int b = in.read();
            if (b < 0) {
                return null;
            }
            head.append((char) b);
        }
        return head.toString();
    }

    private static Seen parse(String head) {
        String[] lines = head.split("\r\n");
        int status = Integer.parseInt(lines[0].split(" ")[1]);
        Map<String, String> fields = new LinkedHashMap<>();
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            if (colon > 0) {
                // A field sent twice (the filter's and an annotated method's) is one list, joined.
                fields.merge(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT),
                        lines[i].substring(colon + 1).trim(), (first, then) -> first + ", " + then);
            }
        }
        return new Seen(status, fields);
    }
}
