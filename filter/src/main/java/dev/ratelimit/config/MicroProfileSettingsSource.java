package dev.ratelimit.config;

import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

import java.util.HashSet;
import java.util.Optional;
import java.util.Set;

/**
 * Settings from MicroProfile Config: {@code META-INF/microprofile-config.properties}, system
 * properties and environment variables ({@code RATELIMIT_RULE_LOGIN_LIMIT} for
 * {@code ratelimit.rule.login.limit}), with the usual ordinals.
 */
public final class MicroProfileSettingsSource implements SettingsSource {

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
        Set<String> names = new HashSet<>();
        config.getPropertyNames().forEach(names::add);
        return names;
    }
}
