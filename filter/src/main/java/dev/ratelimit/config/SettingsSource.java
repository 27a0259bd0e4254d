package dev.ratelimit.config;

import java.util.Optional;
import java.util.Set;

/**
 * Where settings come from: MicroProfile Config in a deployment, a map in tests. A small
 * interface so the reader need not know which.
 */
public interface SettingsSource {

    /**
     * A property's value.
     *
     * @param name e.g. {@code ratelimit.rule.api.limit}
     * @return the value, or empty when unset
     */
    Optional<String> get(String name);

    /**
     * Every property name this source knows, for reporting unknown {@code ratelimit.*} names
     * (usually typos).
     *
     * @return the names
     */
    Set<String> names();
}
