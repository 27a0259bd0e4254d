package dev.ratelimit.servlet;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;

/**
 * The body of a request an annotated resource method may hold for its slot, as far as the
 * application read it before the method was stopped: the dispatch at the slot reads it again
 * (what an authentication filter read to check a signature, the form Jakarta REST read for a
 * {@code @FormParam} key), then the rest from the connection. Recorded up to {@link #LIMIT}
 * bytes; a request that read more cannot be held ({@link #replayable()}).
 */
final class RecordedBody {

    /** The most bytes of body recorded: a request whose layers read more before its decision is not held. */
    static final int LIMIT = 64 * 1024;

    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private volatile boolean overflowed;
    /**
     * The stream the first dispatch read from: the slot's dispatch goes on reading it where that
     * one stopped. Asked again, a filter's wrapper before the library's may hand out a new stream
     * (from the start of a body it cached, or decompressing a connection already read).
     */
    private volatile ServletInputStream source;

    /** Whether what was read of the body so far can be read again at the slot. */
    boolean replayable() {
        return !overflowed;
    }

    /** The request passed on at the first dispatch: what is read of its body is recorded. */
    HttpServletRequest recording(HttpServletRequest request) {
        return new HttpServletRequestWrapper(request) {
            private ServletInputStream in;

            @Override
            public synchronized ServletInputStream getInputStream() throws IOException {
                if (in == null) {
                    source = super.getInputStream();
                    in = new Recording(source);
                }
                return in;
            }

            @Override
            public BufferedReader getReader() throws IOException {
                return new BufferedReader(new InputStreamReader(getInputStream(), charset(this)));
            }
        };
    }

    /** The request dispatched at the slot: the body read before, then the rest from the connection. */
    HttpServletRequest replaying(HttpServletRequest request) {
        byte[] read;
        synchronized (bytes) {
            read = bytes.toByteArray();
        }
        ServletInputStream first = source;
        if (first == null) {
            // Nothing read the body before the decision: the slot's dispatch reads it all, as it comes.
            return request;
        }
        return new HttpServletRequestWrapper(request) {
            private ServletInputStream in;

            @Override
            public synchronized ServletInputStream getInputStream() {
                if (in == null) {
                    in = new Replaying(read, first);
                }
                return in;
            }

            @Override
            public BufferedReader getReader() throws IOException {
                return new BufferedReader(new InputStreamReader(getInputStream(), charset(this)));
            }
        };
    }

    private static Charset charset(HttpServletRequest request) {
        String name = request.getCharacterEncoding();
        try {
            return name == null ? StandardCharsets.ISO_8859_1 : Charset.forName(name);
        } catch (RuntimeException e) {
            return StandardCharsets.ISO_8859_1;
        }
    }

    private void record(byte[] b, int offset, int length) {
        if (length <= 0 || overflowed) {
            return;
        }
        synchronized (bytes) {
            if (bytes.size() + length > LIMIT) {
                overflowed = true;
                return;
            }
            bytes.write(b, offset, length);
        }
    }

    /** The connection's stream, copying what is read. */
    private final class Recording extends ServletInputStream {
        private final ServletInputStream in;

        Recording(ServletInputStream in) {
            this.in = in;
        }

        @Override
        public int read() throws IOException {
            int b = in.read();
            if (b >= 0) {
                record(new byte[] {(byte) b}, 0, 1);
            }
            return b;
        }

        @Override
        public int read(byte[] b, int offset, int length) throws IOException {
            int n = in.read(b, offset, length);
            record(b, offset, n);
            return n;
        }

        @Override
        public boolean isFinished() {
            return in.isFinished();
        }

        @Override
        public boolean isReady() {
            return in.isReady();
        }

        @Override
        public void setReadListener(ReadListener listener) {
            // Read without blocking: not recorded as it comes, so never held.
            overflowed = true;
            in.setReadListener(listener);
        }
    }

    /** What was read before, then the connection's stream. */
    private static final class Replaying extends ServletInputStream {
        private final byte[] read;
        private final ServletInputStream rest;
        private int at;

        Replaying(byte[] read, ServletInputStream rest) {
            this.read = read;
            this.rest = rest;
        }

        @Override
        public int read() throws IOException {
            return at < read.length ? read[at++] & 0xff : rest.read();
        }

        @Override
        public int read(byte[] b, int offset, int length) throws IOException {
            if (at < read.length) {
                int n = Math.min(length, read.length - at);
                System.arraycopy(read, at, b, offset, n);
                at += n;
                return n;
            }
            return rest.read(b, offset, length);
        }

        @Override
        public int available() throws IOException {
            return at < read.length ? read.length - at : rest.available();
        }

        @Override
        public boolean isFinished() {
            return at >= read.length && rest.isFinished();
        }

        @Override
        public boolean isReady() {
            return at < read.length || rest.isReady();
        }

        @Override
        public void setReadListener(ReadListener listener) {
            rest.setReadListener(listener);
        }
    }
}
