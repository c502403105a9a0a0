// A program for bench/jfr.sh to record with the JDK: two threads walking a random path of
// five calls among eight methods, so that a 1 ms CPU sampling period over 30 s gives some
// 44,000 samples on about 25,000 distinct stacks (8^5 paths), the shape a busy service's
// recording has, where the fixtures have a few hundred stacks.
public class JfrStacks {
    static volatile long sink;

    static long spin(long x) {
        for (int i = 0; i < 2000; i++)
            x = x * 31 + i;
        return x;
    }

    static long step(long[] rng, int d) {
        if (d == 0)
            return spin(rng[0]);
        rng[0] = rng[0] * 6364136223846793005L + 1442695040888963407L;
        switch ((int) (rng[0] >>> 61)) {
            case 0: return m0(rng, d - 1);
            case 1: return m1(rng, d - 1);
            case 2: return m2(rng, d - 1);
            case 3: return m3(rng, d - 1);
            case 4: return m4(rng, d - 1);
            case 5: return m5(rng, d - 1);
            case 6: return m6(rng, d - 1);
            default: return m7(rng, d - 1);
        }
    }

    static long m0(long[] r, int d) { return step(r, d) + 1; }
    static long m1(long[] r, int d) { return step(r, d) + 2; }
    static long m2(long[] r, int d) { return step(r, d) + 3; }
    static long m3(long[] r, int d) { return step(r, d) + 4; }
    static long m4(long[] r, int d) { return step(r, d) + 5; }
    static long m5(long[] r, int d) { return step(r, d) + 6; }
    static long m6(long[] r, int d) { return step(r, d) + 7; }
    static long m7(long[] r, int d) { return step(r, d) + 8; }

    public static void main(String[] a) throws Exception {
        long end = System.currentTimeMillis() + Long.parseLong(a[0]) * 1000;
        Thread[] ts = new Thread[2];
        for (int t = 0; t < ts.length; t++) {
            long[] rng = { t + 1 };
            ts[t] = new Thread(() -> {
                while (System.currentTimeMillis() < end)
                    sink += step(rng, 5);
            }, "worker-" + t);
            ts[t].start();
        }
        for (Thread t : ts)
            t.join();
    }
}
