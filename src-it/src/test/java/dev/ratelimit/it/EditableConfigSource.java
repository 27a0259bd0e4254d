package dev.ratelimit.it;

import org.eclipse.microprofile.config.spi.ConfigSource;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** A MicroProfile config source a test edits while the application runs (settings refresh). */
public final class EditableConfigSource implements ConfigSource {

    /** The properties, edited by the test. */
    public final Map<String, String> values = new ConcurrentHashMap<>();
    private final String name;
    private final int ordinal;

    /**
     * A source.
     *
     * @param name    its name
     * @param ordinal its priority among the sources
     */
    public EditableConfigSource(String name, int ordinal) {
        this.name = name;
        this.ordinal = ordinal;
    }

    @Override
    public Set<String> getPropertyNames() {
        return Set.copyOf(values.keySet());
    }

    @Override
    public String getValue(String property) {
        return values.get(property);
    }

    @Override
    public String getName() {
        return name;
    }

    @Override
    public int getOrdinal() {
        return ordinal;
    }
}
