package dev.ratelimit.valkey.connection;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Collection;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;

/** TLS sockets that trust exactly the CA certificates of one PEM file (like {@code valkey-cli --cacert}). */
public final class TrustedCertificates {

    private TrustedCertificates() {
    }

    /**
     * Sockets that trust the CA certificates of the file.
     *
     * @param pemFile the PEM file of CA certificates
     * @return the socket factory
     * @throws IllegalArgumentException naming the file when it cannot be read or holds no certificate
     */
    public static SSLSocketFactory socketFactory(Path pemFile) {
        try (InputStream in = Files.newInputStream(pemFile)) {
            Collection<? extends Certificate> certificates = CertificateFactory.getInstance("X.509").generateCertificates(in);
            if (certificates.isEmpty()) {
                throw new IllegalArgumentException("TLS CA file " + pemFile + " holds no certificate");
            }
            KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
            trusted.load(null, null);
            int i = 0;
            for (Certificate certificate : certificates) {
                trusted.setCertificateEntry("ca-" + i++, certificate);
            }
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(trusted);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, trust.getTrustManagers(), null);
            return context.getSocketFactory();
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("TLS CA file " + pemFile + " cannot be used: " + e.getMessage(), e);
        }
    }
}
