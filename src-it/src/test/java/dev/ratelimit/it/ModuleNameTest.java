package dev.ratelimit.it;

import dev.ratelimit.micrometer.MicrometerListener;
import dev.ratelimit.servlet.RateLimitFilter;
import org.junit.jupiter.api.Test;

import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReference;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On the module path, each published JAR is an automatic module under the name its manifest
 * declares, not one Java derives from the file's name (README, "Java modules").
 */
class ModuleNameTest {

    @Test
    void theFilterJarIsTheAutomaticModuleDevRatelimit() throws URISyntaxException {
        assertAutomaticModule(jarOf(RateLimitFilter.class), "dev.ratelimit");
    }

    @Test
    void theMicrometerJarIsTheAutomaticModuleDevRatelimitMicrometer() throws URISyntaxException {
        assertAutomaticModule(jarOf(MicrometerListener.class), "dev.ratelimit.micrometer");
    }

    private static void assertAutomaticModule(Path jar, String name) {
        assertThat(jar.toString()).as("tests run against the packaged JAR").endsWith(".jar");
        Set<ModuleReference> modules = ModuleFinder.of(jar).findAll();
        assertThat(modules).hasSize(1);
        ModuleDescriptor descriptor = modules.iterator().next().descriptor();
        assertThat(descriptor.name()).as("the module name of " + jar).isEqualTo(name);
        assertThat(descriptor.isAutomatic()).as(jar + " has no module-info").isTrue();
    }

    private static Path jarOf(Class<?> type) throws URISyntaxException {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
    }
}
