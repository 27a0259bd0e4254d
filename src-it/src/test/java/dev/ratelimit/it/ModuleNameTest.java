package dev.ratelimit.it;

import dev.ratelimit.micrometer.MicrometerListener;
import dev.ratelimit.servlet.RateLimitFilter;
import org.junit.jupiter.api.Test;

import java.lang.module.Configuration;
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

    @Test
    void theJakartaJarIsTheAutomaticModuleDevRatelimitJakarta() throws URISyntaxException {
        assertAutomaticModule(jarOf(dev.ratelimit.jakarta.RateLimited.class), "dev.ratelimit.jakarta");
    }

    /**
     * Each JAR alone is a module; a user's module path holds both, and two modules may not share
     * a package: resolved and loaded together, as the module system loads an application.
     */
    @Test
    void bothJarsAreModulesOfOneApplication() throws URISyntaxException {
        ModuleFinder both = ModuleFinder.of(jarOf(RateLimitFilter.class), jarOf(MicrometerListener.class));
        Configuration configuration = ModuleLayer.boot().configuration()
                .resolve(both, ModuleFinder.of(), Set.of("dev.ratelimit", "dev.ratelimit.micrometer"));
        ModuleLayer layer = ModuleLayer.boot().defineModulesWithOneLoader(configuration, ClassLoader.getSystemClassLoader());
        assertThat(layer.modules()).extracting(Module::getName)
                .containsExactlyInAnyOrder("dev.ratelimit", "dev.ratelimit.micrometer");
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
