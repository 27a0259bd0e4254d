package dev.ratelimit.it.jakarta;

import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;

/** A Jakarta REST resource calling the CDI bean: its refusal becomes the filter's 429. */
@Path("accounts/{id}/reset")
public class ResetResource {

    private final MailService mails;

    ResetResource(MailService mails) {
        this.mails = mails;
    }

    /**
     * Sends the account a reset mail.
     *
     * @param id the account
     * @return what was done
     */
    @POST
    public String reset(@PathParam("id") long id) {
        mails.sendReset(id);
        return "sent";
    }
}
