package dev.ratelimit.config;

/** Which rate-limit header fields responses carry. */
public enum HeaderMode {
    /** The IETF draft's {@code RateLimit-Policy} and {@code RateLimit}. */
    DRAFT("draft"),
    /** {@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining}, {@code X-RateLimit-Reset}. */
    LEGACY("legacy"),
    /** Both sets. */
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

    /**
     * Whether the draft fields are sent.
     *
     * @return true for {@link #DRAFT} and {@link #BOTH}
     */
    public boolean draft() {
        return this == DRAFT || this == BOTH;
    }

    /**
     * Whether the legacy fields are sent.
     *
     * @return true for {@link #LEGACY} and {@link #BOTH}
     */
    public boolean legacy() {
        return this == LEGACY || this == BOTH;
    }
}
