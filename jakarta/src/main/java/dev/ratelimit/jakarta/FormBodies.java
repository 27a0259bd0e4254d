package dev.ratelimit.jakarta;

import jakarta.ws.rs.BadRequestException;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.MultivaluedHashMap;
import jakarta.ws.rs.core.MultivaluedMap;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;

/**
 * The form parameters of a request's {@code application/x-www-form-urlencoded} body, read before
 * the resource method runs and put back whole for it: a {@code @FormParam} key is known before
 * the method is called.
 */
final class FormBodies {

    private FormBodies() {
    }

    /**
     * Reads the form and puts the body back.
     *
     * @param context the request
     * @return the parameters; none when the body is not a form
     * @throws IOException         when the body cannot be read
     * @throws BadRequestException when it is not a form (a malformed escape, an unknown charset)
     */
    static MultivaluedMap<String, String> read(ContainerRequestContext context) throws IOException {
        MultivaluedMap<String, String> form = new MultivaluedHashMap<>();
        MediaType type = context.getMediaType();
        if (type == null || !type.isCompatible(MediaType.APPLICATION_FORM_URLENCODED_TYPE) || !context.hasEntity()) {
            return form;
        }
        byte[] body = context.getEntityStream().readAllBytes();
        context.setEntityStream(new ByteArrayInputStream(body));
        String charsetName = type.getParameters().get(MediaType.CHARSET_PARAMETER);
        try {
            Charset charset = charsetName == null ? StandardCharsets.UTF_8 : Charset.forName(charsetName);
            for (String pair : new String(body, charset).split("&")) {
                if (pair.isEmpty()) {
                    continue;
                }
                int equals = pair.indexOf('=');
                String name = URLDecoder.decode(equals < 0 ? pair : pair.substring(0, equals), charset);
                String value = equals < 0 ? "" : URLDecoder.decode(pair.substring(equals + 1), charset);
                form.add(name, value);
            }
        } catch (IllegalArgumentException e) {
            // A malformed escape or an unknown charset: the client's error, answered as Jakarta REST answers it.
            throw new BadRequestException("the form body cannot be decoded: " + e.getMessage(), e);
        }
        return form;
    }
}
