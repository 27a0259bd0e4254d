package dev.ratelimit.it.jakarta;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;

import java.util.List;

/**
 * A Jakarta REST resource sending several reset mails in one request (a batch, or a retry loop):
 * each call of the CDI method is a call the rule must count. It hands the request it serves to
 * {@link CurrentRequest}, as a Jakarta EE server makes the request in progress injectable.
 */
@Path("resets")
public class BatchResetResource {

    /** The request the resource is serving on this thread, for {@link CurrentRequest}. */
    static final ThreadLocal<HttpServletRequest> CURRENT = new ThreadLocal<>();

    private final MailService mails;

    @Context
    private HttpServletRequest request;

    BatchResetResource(MailService mails) {
        this.mails = mails;
    }

    /**
     * Sends one reset mail per listed account, repeats included.
     *
     * @param ids the accounts
     * @return what was done
     */
    @POST
    public String reset(@QueryParam("id") List<Long> ids) {
        CURRENT.set(request);
        try {
            ids.forEach(mails::sendReset);
            return "sent " + ids.size();
        } finally {
            CURRENT.remove();
        }
    }
}
