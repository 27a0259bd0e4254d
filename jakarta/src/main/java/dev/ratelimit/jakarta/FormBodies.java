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
     * A request's form.
     *
     * @param parameters the form's parameters; none when the body is not a form
     * @param readBefore whether a form body was sent and read before Jakarta REST could (by the
     *                   servlet filter's {@code getParameter}): the method then receives the
     *                   servlet request's parameters, as Jakarta REST falls back to them
     */
    record Form(MultivaluedMap<String, String> parameters, boolean readBefore) {
    }

    /**
     * Reads the form and puts the body back.
     *
     * @param context the request
     * @param sent    the length the servlet request says the body has (-1: not known), or 0 outside a servlet container
     * @return the form
     * @throws IOException         when the body cannot be read
     * @throws BadRequestException when it is not a form (a malformed escape, an unknown charset)
     */
    static Form read(ContainerRequestContext context, long sent) throws IOException {
        MultivaluedMap<String, String> form = new MultivaluedHashMap<>();
        MediaType type = context.getMediaType();
        if (type == null || !type.isCompatible(MediaType.APPLICATION_FORM_URLENCODED_TYPE)) {
            return new Form(form, false);
        }
        byte[] body = context.hasEntity() ? context.getEntityStream().readAllBytes() : new byte[0];
        if (body.length == 0) {
            return new Form(form, sent != 0);
        }
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
        return new Form(form, false);
    }
}
