package dev.ratelimit.config;

import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;
import org.eclipse.microprofile.config.spi.ConfigSource;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * Settings from MicroProfile Config: {@code META-INF/microprofile-config.properties}, system
 * properties and environment variables ({@code RATELIMIT_RULE_LOGIN_LIMIT} for
 * {@code ratelimit.rule.login.limit}), with the usual ordinals.
 */
public final class MicroProfileSettingsSource implements SettingsSource {

    /** The ordinal MicroProfile Config gives environment variables. */
    private static final int ENVIRONMENT_ORDINAL = 300;
    /** The settings file every implementation reads from {@code META-INF/} on the class path. */
    private static final String PROPERTIES_FILE = "microprofile-config.properties";

    private final Config config;

    private MicroProfileSettingsSource(Config config) {
        this.config = config;
    }

    /**
     * The configuration of an application class loader.
     *
     * @param loader the application's class loader
     * @return the source
     * @throws IllegalStateException when no MicroProfile Config implementation is available
     */
    public static MicroProfileSettingsSource forClassLoader(ClassLoader loader) {
        return new MicroProfileSettingsSource(ConfigProvider.getConfig(loader));
    }

    @Override
    public Optional<String> get(String name) {
        return config.getOptionalValue(name, String.class);
    }

    @Override
    public Set<String> names() {
        // An implementation may keep the names it saw first (SmallRye Config does), and a refresh
        // must see a plan or a typo added since, and not a setting removed since: each source's
        // names as they are now, and of the configuration's own, ours only while they have a value.
        Set<String> names = new HashSet<>();
        for (ConfigSource source : config.getConfigSources()) {
            names.addAll(source.getPropertyNames());
        }
        for (String name : config.getPropertyNames()) {
            if (!name.startsWith(SettingsReader.PREFIX) || hasValue(name)) {
                names.add(name);
            }
        }
        return names;
    }

    /** Whether the name has a value now; one whose value cannot be read (an unresolved expression) counts as set. */
    private boolean hasValue(String name) {
        try {
            return config.getOptionalValue(name, String.class).isPresent();
        } catch (RuntimeException e) {
            return true;
        }
    }

    /**
     * The configuration's sources, highest ordinal first, and whether any of them is a
     * {@code microprofile-config.properties} file.
     */
    @Override
    public String whereLooked() {
        List<String> sources = new ArrayList<>();
        boolean file = false;
        for (ConfigSource source : config.getConfigSources()) {
            sources.add(source.getName() + " (ordinal " + source.getOrdinal() + ")");
            file |= source.getName().contains(PROPERTIES_FILE);
        }
        return "MicroProfile Config looked in " + (sources.isEmpty() ? "no source at all" : String.join(", ", sources))
                + (file ? "" : "; no META-INF/" + PROPERTIES_FILE + " was found on the application's class path");
    }

    @Override
    public boolean fromEnvironment(String name) {
        String variable = SettingsSource.environmentForm(name);
        if (System.getenv(variable) != null) {
            return true;
        }
        // An environment source of the implementation's own (e.g. one built from a map).
        for (ConfigSource source : config.getConfigSources()) {
            boolean environment = source.getOrdinal() == ENVIRONMENT_ORDINAL
                    || source.getName().toLowerCase(Locale.ROOT).contains("env");
            if (environment && (source.getValue(variable) != null || source.getPropertyNames().contains(variable))) {
                return true;
            }
        }
        return false;
    }
}
