// A recording for tests/cli/jfr.bats: three threads that contend for one monitor, park,
// allocate strings and run for the milliseconds given, under the JDK's recorder.
import java.util.*;
public class Hot {
    static final Object lock = new Object();
    static long sink;
    public static void main(String[] a) throws Exception {
        long end = System.nanoTime() + Long.parseLong(a[0]) * 1000000L;
        Thread[] ts = new Thread[3];
        for (int t = 0; t < ts.length; t++) {
            ts[t] = new Thread(() -> {
                Random r = new Random(1);
                while (System.nanoTime() < end) {
                    synchronized (lock) {
                        StringBuilder sb = new StringBuilder();
                        for (int i = 0; i < 2000; i++) sb.append(r.nextInt());
                        sink += sb.toString().hashCode();
                    }
                    java.util.concurrent.locks.LockSupport.parkNanos(100000);
                }
            }, "worker-" + t);
            ts[t].start();
        }
        for (Thread t : ts) t.join();
    }
}
