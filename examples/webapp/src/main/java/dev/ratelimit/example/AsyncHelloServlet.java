package dev.ratelimit.example;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;

/**
 * {@code GET /api/async}: the API endpoint answered asynchronously, as a servlet waiting on a
 * remote call would answer. It runs only because the filter declares async support.
 */
public class AsyncHelloServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) {
        AsyncContext async = request.startAsync();
        async.start(() -> {
            try {
                async.getResponse().setContentType("application/json");
                async.getResponse().getWriter().write("{\"hello\":\"async\"}\n");
            } catch (IOException e) {
                throw new IllegalStateException("cannot write the response", e);
            } finally {
                async.complete();
            }
        });
    }
}
