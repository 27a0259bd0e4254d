package dev.ratelimit;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/** The JAR's public surface is what module-info.java exports, and only that. */
class ModuleTest {

    @Test
    void onlyTheApiTheFilterTheLimitersAndTheResilientPathAreExported() throws IOException {
        ModuleDescriptor descriptor = descriptor();
        Map<String, Set<String>> exports = new TreeMap<>();
        for (ModuleDescriptor.Exports export : descriptor.exports()) {
            exports.put(export.source(), export.targets());
        }
        assertThat(descriptor.name()).isEqualTo("dev.ratelimit");
        assertThat(exports).containsOnly(
                Map.entry("dev.ratelimit", Set.of()),
                Map.entry("dev.ratelimit.servlet", Set.of()),
                Map.entry("dev.ratelimit.valkey", Set.of()),
                Map.entry("dev.ratelimit.local", Set.of()),
                Map.entry("dev.ratelimit.resilient", Set.of()),
                Map.entry("dev.ratelimit.metrics", Set.of("java.management")));
        // A new package is a choice: exported (public surface) or one of the internal ones.
        Set<String> packages;
        try (var files = Files.walk(Path.of("src/main/java/dev/ratelimit"))) {
            packages = files.filter(Files::isDirectory).map(dir -> "dev/" + Path.of("src/main/java/dev").relativize(dir))
                    .map(name -> name.replace('/', '.')).collect(Collectors.toSet());
        }
        assertThat(packages).as("the packages of the JAR")
                .containsExactlyInAnyOrder("dev.ratelimit", "dev.ratelimit.servlet", "dev.ratelimit.valkey",
                        "dev.ratelimit.local", "dev.ratelimit.resilient", "dev.ratelimit.metrics", "dev.ratelimit.config",
                        "dev.ratelimit.net", "dev.ratelimit.internal");
        assertThat(descriptor.requires().stream().map(ModuleDescriptor.Requires::name).collect(Collectors.toSet()))
                .contains("jakarta.servlet", "redis.clients.jedis", "microprofile.config.api", "java.management");
    }

    /** The packages exported to every module (not the qualified exports to one). */
    static Set<String> exportedPackages() {
        try {
            return descriptor().exports().stream().filter(export -> !export.isQualified())
                    .map(ModuleDescriptor.Exports::source).collect(Collectors.toSet());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static ModuleDescriptor descriptor() throws IOException {
        try (InputStream in = Files.newInputStream(Path.of("target/classes/module-info.class"))) {
            return ModuleDescriptor.read(in);
        }
    }
}
