package graphmem;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;

import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.BoltConnectorInternalSettings;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.harness.Neo4j;
import org.neo4j.harness.Neo4jBuilders;

/**
 * Starts a throwaway Neo4j 5 server for graphmem's tests: Bolt on a random loopback port, a
 * temporary data folder (or the one named by the first argument, which is kept), no auth. Prints
 * {@code HOME <folder>} and {@code BOLT <uri>} once it answers, and stops cleanly on SIGTERM
 * (or when standard input closes), removing the temporary folder. Bolt's connections and threads get one second to
 * finish on shutdown, not Neo4j's default ten: a test server has nothing to drain.
 */
public final class Launcher {
    private Launcher() {
    }

    public static void main(String[] args) throws Exception {
        boolean temporary = args.length == 0;
        Path home = temporary ? Files.createTempDirectory("graphmem-neo4j-") : Path.of(args[0]);
        Neo4j neo4j = Neo4jBuilders.newInProcessBuilder(home)
                .withDisabledServer()
                .withConfig(BoltConnector.enabled, true)
                .withConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", 0))
                .withConfig(BoltConnectorInternalSettings.connection_shutdown_wait_time,
                        Duration.ofSeconds(1))
                .withConfig(BoltConnectorInternalSettings.thread_pool_shutdown_wait_time,
                        Duration.ofSeconds(1))
                .build();
        CountDownLatch stop = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            neo4j.close();
            if (temporary) {
                remove(home);
            }
            stop.countDown();
        }));
        System.out.println("HOME " + home.toAbsolutePath());
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

    private static void remove(Path folder) {
        try (Stream<Path> paths = Files.walk(folder)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException ignored) {
            // already gone
        }
    }
}
