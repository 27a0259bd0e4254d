package dev.ratelimit.valkey.connection;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Optional;

/** What a Valkey URL must be for the client to connect with it: {@code ValkeySettings.urlProblem}. */
public final class ValkeyUrl {

    private ValkeyUrl() {
    }

    /** Why the URL cannot work, or empty. */
    public static Optional<String> problem(String url) {
        if (!url.startsWith("redis://") && !url.startsWith("rediss://")) {
            return Optional.of("must start with redis:// or rediss://");
        }
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException e) {
            // The reason alone: the exception's message repeats the URL, password included.
            return Optional.of("is not a valid URI (" + e.getReason() + " at index " + e.getIndex() + ")");
        }
        if (uri.getHost() == null) {
            // java.net.URI reads no host from an authority it cannot parse (an '_', a port not
            // all digits), and the client connects to the host it reads.
            return Optional.of("has no host the client can read: host[:port], a host name of letters, digits, '-'"
                    + " and '.', an IPv4 address or an [IPv6] one, and a port of digits");
        }
        if (uri.getPort() != -1 && (uri.getPort() < 1 || uri.getPort() > 65_535)) {
            return Optional.of("has port " + uri.getPort() + ": a port is from 1 to 65535");
        }
        String path = uri.getPath();
        if (path != null && !path.isEmpty() && !path.equals("/") && !path.matches("/[0-9]{1,9}")) {
            return Optional.of("has path " + path + ": only a database number may follow the host, e.g. /0");
        }
        return Optional.empty();
    }
}
