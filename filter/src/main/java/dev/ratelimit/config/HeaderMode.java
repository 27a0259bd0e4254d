package dev.ratelimit.config;

/**
 * Which rate-limit header fields responses carry. Each mode names one or more header versions;
 * the servlet package maps a mode to the classes that write them, so a new version of the
 * draft is one value here and one small writer there.
 */
public enum HeaderMode {
    /** draft-ietf-httpapi-ratelimit-headers-11: {@code RateLimit-Policy} and {@code RateLimit}. */
    DRAFT("draft"),
    /**
     * draft-ietf-httpapi-ratelimit-headers-03, for clients written against it:
     * {@code RateLimit-Limit}, {@code RateLimit-Remaining}, {@code RateLimit-Reset}.
     */
    DRAFT_03("draft-03"),
    /** {@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining}, {@code X-RateLimit-Reset}. */
    LEGACY("legacy"),
    /** {@link #DRAFT} and {@link #LEGACY}. */
    BOTH("both"),
    /** None ({@code Retry-After} is still sent on rejection). */
    NONE("none");

    private final String id;

    HeaderMode(String id) {
        this.id = id;
    }

    /**
     * The id in settings.
     *
     * @return e.g. {@code draft}
     */
    public String id() {
        return id;
    }
}
