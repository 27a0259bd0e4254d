package dev.ratelimit.example;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;

/**
 * {@code POST /complete}: a stand-in for a language model. Its answer costs tokens, known only
 * once it is written: 4 per word of the prompt and 100 for the answer. It reports them in the
 * {@code X-Tokens-Used} header, which the {@code tokens} rule charges ({@code cost-from}).
 */
public class CompleteServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String prompt = request.getParameter("prompt");
        String[] words = prompt == null || prompt.isBlank() ? new String[0] : prompt.trim().split("\\s+");
        long tokens = 4L * words.length + 100;
        response.setHeader("X-Tokens-Used", Long.toString(tokens));
        response.setContentType("application/json");
        response.getWriter().write("{\"completion\":\"Keys expire, counts stay: one Valkey, every node.\",\"tokens\":"
                + tokens + "}\n");
    }
}
