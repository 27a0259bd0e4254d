package dev.ratelimit.valkey;

import java.util.List;
import java.util.Objects;

/**
 * Whether the Valkey servers a limiter writes to keep their data across a restart: each primary
 * asked {@code CONFIG GET appendonly save}; one persists when it writes an append-only file or
 * takes snapshots. Without either, a restart forgets every count (see the README's "Quotas that
 * survive a restart").
 *
 * @param volatileServers the primaries that answered and persist nothing, e.g.
 *                        {@code 10.0.0.5:6379}; empty when all that answered persist, or none did
 * @param unknown         why it is not known of some or all (the user may not run {@code CONFIG},
 *                        a server did not answer), or null when every primary answered
 */
public record Persistence(List<String> volatileServers, String unknown) {

    /**
     * Copies the list.
     *
     * @throws NullPointerException if the list is null
     */
    public Persistence {
        volatileServers = List.copyOf(Objects.requireNonNull(volatileServers, "volatileServers"));
    }

    /** {@return every primary asked persists} */
    static Persistence persistent() {
        return new Persistence(List.of(), null);
    }

    /**
     * Some primaries persist nothing.
     *
     * @param servers their addresses
     * @return the answer
     */
    static Persistence volatileOn(List<String> servers) {
        return new Persistence(servers, null);
    }

    /**
     * Not known.
     *
     * @param reason why, e.g. the server's NOPERM error
     * @return the answer
     */
    static Persistence unknown(String reason) {
        return new Persistence(List.of(), Objects.requireNonNull(reason, "reason"));
    }

    /** {@return whether every primary answered} */
    public boolean known() {
        return unknown == null;
    }

    /** {@return whether every primary answered and each persists} */
    public boolean persists() {
        return known() && volatileServers.isEmpty();
    }
}
