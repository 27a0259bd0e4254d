package dev.ratelimit.it.checker;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * Every event of one run, in the order it happened, in memory for the invariants and as JSON
 * lines in a file ({@code <dir>/<name>.jsonl}), written as the run goes so that a run that
 * dies still leaves what it did. The file is deleted by {@link #discard()} when the run
 * passed and kept otherwise.
 */
final class History implements AutoCloseable {

    private final List<Event> events = new ArrayList<>();
    private final Path file;
    private final BufferedWriter writer;
    private final long startNanos = System.nanoTime();
    /** The events of a call made on another thread, held until it returns (see {@link #hold}). */
    private final ThreadLocal<List<Event>> held = new ThreadLocal<>();

    /**
     * A history written to {@code dir/name.jsonl}.
     *
     * @param dir  where histories go, created if missing
     * @param name the file's name without extension (the seed and target)
     */
    History(Path dir, String name) {
        try {
            Files.createDirectories(dir);
            this.file = dir.resolve(name + ".jsonl");
            this.writer = Files.newBufferedWriter(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Real milliseconds since the run began.
     *
     * @return the time
     */
    long real() {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }

    /**
     * From now on, this thread's events are held back until {@link #release()}: the events of
     * one operation then stay together although other threads record theirs meanwhile, and the
     * operation's place in the history is the time it returned.
     */
    void hold() {
        held.set(new ArrayList<>());
    }

    /** Records the events this thread held back, together, and stops holding them. */
    void release() {
        List<Event> mine = held.get();
        held.remove();
        synchronized (this) {
            for (Event event : mine) {
                write(event);
            }
        }
    }

    /**
     * Records an event.
     *
     * @param event what happened
     */
    void add(Event event) {
        List<Event> mine = held.get();
        if (mine != null) {
            mine.add(event);
            return;
        }
        synchronized (this) {
            write(event);
        }
    }

    private void write(Event event) {
        events.add(event);
        try {
            writer.write(event.json().toString());
            writer.newLine();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The events so far.
     *
     * @return a copy, in order
     */
    synchronized List<Event> events() {
        return List.copyOf(events);
    }

    /**
     * The file the history is written to.
     *
     * @return its path
     */
    Path file() {
        return file;
    }

    /**
     * The lines of the events that match, at most {@code max} (the first and last halves when
     * there are more), for a failure message.
     *
     * @param which the events to show
     * @param max   most lines
     * @return one JSON line per event
     */
    synchronized List<String> excerpt(Predicate<Event> which, int max) {
        List<String> lines = new ArrayList<>();
        for (Event event : events) {
            if (which.test(event)) {
                lines.add(event.json().toString());
            }
        }
        if (lines.size() <= max) {
            return lines;
        }
        List<String> cut = new ArrayList<>(lines.subList(0, max / 2));
        cut.add("... " + (lines.size() - max) + " more events of that rule and key, all in the file ...");
        cut.addAll(lines.subList(lines.size() - max / 2, lines.size()));
        return cut;
    }

    /** Deletes the file: the run passed. */
    void discard() {
        close();
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public synchronized void close() {
        try {
            writer.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
