package dev.ratelimit.valkey.script;

/** What one call of the limiter script does: its ARGV[2] (see {@code dispatcher.lua}). */
public enum ScriptMode {
    /** Decide without writing anything. */
    PEEK("0"),
    /** Decide and take what is allowed (and what count-rejected rules record). */
    ACQUIRE("1"),
    /** The request was rejected elsewhere (another cluster slot group): only count-rejected rules write. */
    RECORD_REJECTION("2"),
    /** Work is done: each rule takes the given units whatever it has left, into debt (a cost known after the response). */
    CHARGE("3");

    private final String argument;

    ScriptMode(String argument) {
        this.argument = argument;
    }

    /** The value of ARGV[2]. */
    String argument() {
        return argument;
    }
}
