import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

/**
 * Starts AWS's DynamoDB Local with its usual command-line arguments, but listening on 127.0.0.1
 * only. DynamoDB Local has no flag for the listen address (its Jetty server binds every
 * interface), so this sets the host of its one connector before the server starts. Run with
 * Java's source-file mode by infra/local/stores.ts (startDynamoLocal), with DynamoDBLocal.jar on
 * the class path; telemetry is switched off there with -disableTelemetry.
 */
public final class DynamoDbLocalLoopback {
  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server jetty = (Server) field.get(proxy);
    for (Connector connector : jetty.getConnectors()) {
      ((ServerConnector) connector).setHost("127.0.0.1");
    }
    proxy.start();
    System.out.println("DynamoDB Local listening on 127.0.0.1 only");
  }
}
