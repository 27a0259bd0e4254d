package dev.ratelimit.config;

/** What a rule does when Valkey cannot be reached in time. */
public enum OnFailure {
    /** Allow the request: a limiter that takes the site down has turned protection into an outage. */
    OPEN("open"),
    /** Reject with 503 and {@code Retry-After}: for login, password reset, one-time codes, paid calls. */
    CLOSED("closed"),
    /** Decide with the in-process limiter (limits per instance) until Valkey answers again. */
    LOCAL("local");

    private final String id;

    OnFailure(String id) {
        this.id = id;
    }

    /**
     * The id in settings.
     *
     * @return e.g. {@code closed}
     */
    public String id() {
        return id;
    }
}
