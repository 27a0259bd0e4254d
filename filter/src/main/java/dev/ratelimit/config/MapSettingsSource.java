package dev.ratelimit.config;

import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Settings from a map, for tests and for applications that configure the filter in code.
 *
 * @param values property names to values
 */
public record MapSettingsSource(Map<String, String> values) implements SettingsSource {

    /** Copies the map. */
    public MapSettingsSource {
        values = Map.copyOf(values);
    }

    @Override
    public Optional<String> get(String name) {
        return Optional.ofNullable(values.get(name));
    }

    @Override
    public Set<String> names() {
        return values.keySet();
    }
}
