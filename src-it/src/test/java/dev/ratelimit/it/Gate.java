package dev.ratelimit.it;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A loopback port that drops connections until opened, then relays them to a target port (a
 * sentinel, a Valkey node). It counts the connections it was asked for, dropped or relayed, so
 * that a test can tell whether a client still tries to connect.
 */
final class Gate implements AutoCloseable {

    private final ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    private final int target;
    private final List<Socket> sockets = new ArrayList<>();
    private final AtomicInteger attempts = new AtomicInteger();
    private volatile boolean open;
    private volatile long holdMillis;

    Gate(int target) throws IOException {
        this.target = target;
        Thread acceptor = new Thread(this::accept, "gate");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port() {
        return server.getLocalPort();
    }

    /** How many connections were asked for so far. */
    int attempts() {
        return attempts.get();
    }

    void open() {
        open = true;
    }

    /**
     * Opens the gate, each connection relayed only after {@code millis}: a target that is slow
     * to answer, while the client waits within its reply timeout.
     */
    void openHolding(long millis) {
        holdMillis = millis;
        open = true;
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                attempts.incrementAndGet();
                if (!open) {
                    client.close();
                    continue;
                }
                if (holdMillis == 0) {
                    connect(client);
                } else {
                    Thread held = new Thread(() -> {
                        try {
                            Thread.sleep(holdMillis);
                            connect(client);
                        } catch (IOException | InterruptedException e) {
                            // the gate closed meanwhile
                        }
                    }, "gate-hold");
                    held.setDaemon(true);
                    held.start();
                }
            } catch (IOException e) {
                // closed, or the target gone: the client sees its connection fail
            }
        }
    }

    private void connect(Socket client) throws IOException {
        Socket upstream = new Socket(InetAddress.getLoopbackAddress(), target);
        synchronized (sockets) {
            sockets.add(client);
            sockets.add(upstream);
        }
        relay(client.getInputStream(), upstream.getOutputStream(), "gate-relay");
        relay(upstream.getInputStream(), client.getOutputStream(), "gate-relay");
    }

    /**
     * Copies one direction of a relayed connection on a daemon thread until either side closes.
     *
     * @param from the side read
     * @param to   the side written
     * @param name the thread's name
     */
    static void relay(InputStream from, OutputStream to, String name) {
        Thread thread = new Thread(() -> {
            try (from; to) {
                from.transferTo(to);
            } catch (IOException e) {
                // one side closed
            }
        }, name);
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public void close() throws IOException {
        server.close();
        synchronized (sockets) {
            for (Socket socket : sockets) {
                socket.close();
            }
        }
    }
}
