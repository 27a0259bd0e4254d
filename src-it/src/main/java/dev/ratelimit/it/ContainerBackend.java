package dev.ratelimit.it;

import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;

/** A {@code valkey/valkey:8} container, for machines with Docker but no valkey-server binary. */
final class ContainerBackend implements ValkeyServer.Backend {

    private static final int PORT = 6379;

    private final GenericContainer<?> container;

    private ContainerBackend(GenericContainer<?> container) {
        this.container = container;
    }

    static boolean dockerAvailable() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException | LinkageError e) {
            return false;
        }
    }

    @SuppressWarnings("resource") // closed by close()
    static ContainerBackend launch() {
        GenericContainer<?> container = new GenericContainer<>("valkey/valkey:8")
                .withExposedPorts(PORT)
                .withCommand("valkey-server", "--save", "", "--appendonly", "no");
        container.start();
        return new ContainerBackend(container);
    }

    @Override
    public String url() {
        return "redis://" + container.getHost() + ":" + container.getMappedPort(PORT);
    }

    @Override
    public void stop() {
        throw new UnsupportedOperationException("a container's port changes on restart; install valkey-server "
                + "so the tests can stop and restart it on the same port");
    }

    @Override
    public void start() {
        stop();
    }

    @Override
    public void close() {
        container.stop();
    }
}
