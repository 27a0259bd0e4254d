package dev.ratelimit.it;

import dev.ratelimit.config.InvalidSettingsException;
import dev.ratelimit.config.MicroProfileSettingsSource;
import dev.ratelimit.config.SettingsReader;
import org.eclipse.microprofile.config.spi.ConfigProviderResolver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A settings file put where MicroProfile Config does not look (a WAR's own {@code META-INF/}
 * instead of {@code WEB-INF/classes/META-INF/}), read through the real SmallRye Config: the
 * deployment fails saying that no property of ours was found at all, where Config looked, and
 * where the file goes.
 */
class SettingsFileTest {

    @Test
    void aFileOutsideTheClassPathIsSaidToBeMissing(@TempDir Path war) throws Exception {
        Path misplaced = war.resolve("META-INF/microprofile-config.properties");
        Files.createDirectories(misplaced.getParent());
        Files.writeString(misplaced, "ratelimit.rules=api\nratelimit.rule.api.limit=5\nratelimit.rule.api.window=1m\n");
        Path classes = Files.createDirectories(war.resolve("WEB-INF/classes"));
        try (URLClassLoader loader = new URLClassLoader(new URL[] {classes.toUri().toURL()}, null)) {
            assertThatThrownBy(() -> SettingsReader.read(MicroProfileSettingsSource.forClassLoader(loader)))
                    .isInstanceOf(InvalidSettingsException.class)
                    .hasMessageContaining("no ratelimit.* property was found at all")
                    .hasMessageContaining("MicroProfile Config looked in")
                    .hasMessageContaining("no META-INF/microprofile-config.properties was found on the application's class path")
                    .hasMessageContaining("WEB-INF/classes/META-INF/microprofile-config.properties");
            release(loader);
        }
    }

    @Test
    void theSameFileInWebInfClassesIsRead(@TempDir Path war) throws Exception {
        Path placed = war.resolve("WEB-INF/classes/META-INF/microprofile-config.properties");
        Files.createDirectories(placed.getParent());
        Files.writeString(placed, "ratelimit.rules=api\nratelimit.rule.api.limit=5\nratelimit.rule.api.window=1m\n");
        try (URLClassLoader loader = new URLClassLoader(new URL[] {war.resolve("WEB-INF/classes").toUri().toURL()}, null)) {
            assertThat(SettingsReader.read(MicroProfileSettingsSource.forClassLoader(loader)).rules()).hasSize(1);
            release(loader);
        }
    }

    /** The configuration built for a class loader is cached by the resolver: let it go. */
    private static void release(ClassLoader loader) {
        ConfigProviderResolver resolver = ConfigProviderResolver.instance();
        resolver.releaseConfig(resolver.getConfig(loader));
    }
}
