package dev.ratelimit.example;

import jakarta.inject.Inject;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

/**
 * Sends a welcome mail through {@link WelcomeMails}: the limit is the CDI method's, and its
 * refusal (a {@code RateLimitExceededException}) is answered as the filter's 429 by
 * {@code RateLimitExceededMapper}.
 */
@Path("welcome/{address}")
public class WelcomeResource {

    @Inject
    WelcomeMails mails;

    /**
     * Sends the mail.
     *
     * @param address where to
     * @return what was done
     */
    @POST
    @Produces(MediaType.TEXT_PLAIN)
    public String welcome(@PathParam("address") String address) {
        return mails.send(address);
    }
}
