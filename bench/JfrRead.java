// The JDK's own parser side of bench/jfr.sh: every jdk.ExecutionSample of a recording read
// with jdk.jfr.consumer.RecordingFile and folded (class.method frames, root first), as a
// Java program that converts a recording to folded stacks would.
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

public class JfrRead {
    public static void main(String[] a) throws Exception {
        Map<String, Long> folded = new HashMap<>();
        try (RecordingFile f = new RecordingFile(Path.of(a[0]))) {
            while (f.hasMoreEvents()) {
                RecordedEvent e = f.readEvent();
                if (!e.getEventType().getName().equals("jdk.ExecutionSample"))
                    continue;
                RecordedStackTrace st = e.getStackTrace();
                if (st == null)
                    continue;
                List<RecordedFrame> fr = st.getFrames();
                StringBuilder sb = new StringBuilder();
                for (int i = fr.size() - 1; i >= 0; i--) {
                    RecordedFrame x = fr.get(i);
                    if (sb.length() > 0)
                        sb.append(';');
                    sb.append(x.getMethod().getType().getName()).append('.').append(x.getMethod().getName());
                }
                folded.merge(sb.toString(), 1L, Long::sum);
            }
        }
        long n = 0;
        for (long v : folded.values())
            n += v;
        System.out.println(folded.size() + " stacks, " + n + " samples");
    }
}
