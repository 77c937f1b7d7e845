package graphmem;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.harness.Neo4j;
import org.neo4j.harness.Neo4jBuilders;

/**
 * Starts a throwaway Neo4j 5 server for graphmem's tests: Bolt on a random loopback port, a
 * temporary data folder (or the one named by the first argument), no auth. Prints {@code BOLT <uri>} once it answers, and stops cleanly
 * on SIGTERM (or when standard input closes).
 */
public final class Launcher {
    private Launcher() {
    }

    public static void main(String[] args) throws Exception {
        Path home = args.length > 0 ? Path.of(args[0]) : Files.createTempDirectory("graphmem-neo4j-");
        Neo4j neo4j = Neo4jBuilders.newInProcessBuilder(home)
                .withDisabledServer()
                .withConfig(BoltConnector.enabled, true)
                .withConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", 0))
                .build();
        CountDownLatch stop = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            neo4j.close();
            stop.countDown();
        }));
        System.out.println("BOLT " + neo4j.boltURI());
        System.out.flush();
        Thread watcher = new Thread(() -> {
            try {
                while (System.in.read() != -1) {
                    // the parent holds our stdin open while it wants the server
                }
            } catch (Exception ignored) {
                // closed
            }
            System.exit(0);
        });
        watcher.setDaemon(true);
        watcher.start();
        stop.await();
    }
}
