// One HTTPS GET the way a Java program makes it, for pinproxy's CONNECT tests.
//
//   java HTTPSClient.java PROXY_PORT TRUSTSTORE PASSWORD OUTPUT URL
//
// java.net.http.HttpClient with ProxySelector.of(127.0.0.1:PROXY_PORT) (an
// HttpClient ignores https_proxy) and an SSLContext whose only trust is the
// PKCS12 TRUSTSTORE (made with keytool -importcert). The body goes to OUTPUT;
// stdout gets one JSON line {"status": <int or null>, "error": <text or null>};
// the exit status is 0 when a response arrived, 1 when the request failed.
// A single-file source program: no build step, JDK classes only.

import java.io.FileInputStream;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

public class HTTPSClient {
    static String quoted(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            if (c == '"' || c == '\\') out.append('\\').append(c);
            else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
            else out.append(c);
        }
        return out.append('"').toString();
    }

    /// The exception and its causes, each as "Class: message": the client's own words.
    static String describe(Throwable error) {
        StringBuilder text = new StringBuilder();
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (text.length() > 0) text.append(" <- ");
            text.append(cause.getClass().getName()).append(": ").append(cause.getMessage());
        }
        return text.toString();
    }

    public static void main(String[] args) throws Exception {
        KeyStore trusted = KeyStore.getInstance("PKCS12");
        try (FileInputStream in = new FileInputStream(args[1])) { trusted.load(in, args[2].toCharArray()); }
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(trusted);
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(null, trust.getTrustManagers(), null);
        HttpClient client = HttpClient.newBuilder()
            .proxy(ProxySelector.of(new InetSocketAddress("127.0.0.1", Integer.parseInt(args[0]))))
            .sslContext(tls)
            .connectTimeout(Duration.ofSeconds(30))
            .build();
        HttpRequest request = HttpRequest.newBuilder(URI.create(args[4])).timeout(Duration.ofSeconds(60)).GET().build();
        try {
            HttpResponse<Path> response = client.send(request, HttpResponse.BodyHandlers.ofFile(Path.of(args[3])));
            System.out.println("{\"status\": " + response.statusCode() + ", \"error\": null}");
        } catch (Exception error) {
            System.out.println("{\"status\": null, \"error\": " + quoted(describe(error)) + "}");
            System.exit(1);
        }
    }
}
