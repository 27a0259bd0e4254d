package dev.ratelimit.it;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;

import java.io.IOException;

/**
 * A request whose async context keeps to the letter of the Servlet spec where Jetty is lenient:
 * an {@link AsyncEvent} delivered to a listener added with {@code addListener(listener)} carries
 * no request and no response ({@code getSuppliedRequest()} and {@code getSuppliedResponse()}
 * return null), as on Open Liberty; only a listener added with the request and response
 * supplied gets them back. Jetty itself hands every listener its own.
 */
final class SpecAsyncRequest extends HttpServletRequestWrapper {

    SpecAsyncRequest(HttpServletRequest request) {
        super(request);
    }

    @Override
    public AsyncContext getAsyncContext() {
        return new SpecContext(super.getAsyncContext());
    }

    /** Delegates everything, but delivers to a listener added alone events that carry nothing supplied. */
    private record SpecContext(AsyncContext context) implements AsyncContext {

        @Override
        public void addListener(AsyncListener listener) {
            context.addListener(new Unsupplied(this, listener));
        }

        @Override
        public void addListener(AsyncListener listener, ServletRequest request, ServletResponse response) {
            context.addListener(listener, request, response);
        }

        @Override
        public ServletRequest getRequest() {
            return context.getRequest();
        }

        @Override
        public ServletResponse getResponse() {
            return context.getResponse();
        }

        @Override
        public boolean hasOriginalRequestAndResponse() {
            return context.hasOriginalRequestAndResponse();
        }

        @Override
        public void dispatch() {
            context.dispatch();
        }

        @Override
        public void dispatch(String path) {
            context.dispatch(path);
        }

        @Override
        public void dispatch(ServletContext servletContext, String path) {
            context.dispatch(servletContext, path);
        }

        @Override
        public void complete() {
            context.complete();
        }

        @Override
        public void start(Runnable run) {
            context.start(run);
        }

        @Override
        public <T extends AsyncListener> T createListener(Class<T> type) throws ServletException {
            return context.createListener(type);
        }

        @Override
        public void setTimeout(long timeout) {
            context.setTimeout(timeout);
        }

        @Override
        public long getTimeout() {
            return context.getTimeout();
        }
    }

    /** Passes each event on as one with only the context and the throwable, nothing supplied. */
    private record Unsupplied(AsyncContext context, AsyncListener listener) implements AsyncListener {

        private AsyncEvent bare(AsyncEvent event) {
            return new AsyncEvent(context, event.getThrowable());
        }

        @Override
        public void onComplete(AsyncEvent event) throws IOException {
            listener.onComplete(bare(event));
        }

        @Override
        public void onTimeout(AsyncEvent event) throws IOException {
            listener.onTimeout(bare(event));
        }

        @Override
        public void onError(AsyncEvent event) throws IOException {
            listener.onError(bare(event));
        }

        @Override
        public void onStartAsync(AsyncEvent event) throws IOException {
            listener.onStartAsync(bare(event));
        }
    }
}
