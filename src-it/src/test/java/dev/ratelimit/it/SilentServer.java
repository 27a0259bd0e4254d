package dev.ratelimit.it;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A loopback port that accepts connections, reads whatever is sent and never answers: a hung
 * store, as the network sees it. It counts connections and bytes, so a test can tell whether
 * anything was sent at all.
 */
final class SilentServer implements AutoCloseable {

    private final ServerSocket socket;
    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicLong bytes = new AtomicLong();
    private final List<Socket> accepted = new ArrayList<>();
    private final Thread acceptor;

    SilentServer() throws IOException {
        socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        acceptor = new Thread(this::acceptLoop, "silent-server");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port() {
        return socket.getLocalPort();
    }

    int connections() {
        return connections.get();
    }

    long bytes() {
        return bytes.get();
    }

    private void acceptLoop() {
        while (!socket.isClosed()) {
            try {
                Socket client = socket.accept();
                connections.incrementAndGet();
                synchronized (accepted) {
                    accepted.add(client);
                }
                Thread reader = new Thread(() -> drain(client), "silent-reader");
                reader.setDaemon(true);
                reader.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private void drain(Socket client) {
        byte[] buffer = new byte[4096];
        try (InputStream in = client.getInputStream()) {
            int n;
            while ((n = in.read(buffer)) >= 0) {
                bytes.addAndGet(n);
            }
        } catch (IOException e) {
            // the client gave up: that is what it should do
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
        synchronized (accepted) {
            for (Socket client : accepted) {
                client.close();
            }
        }
    }
}
