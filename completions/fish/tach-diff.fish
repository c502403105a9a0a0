# fish completion for tach-diff(1)

function __tachfmt_states
    printf '%s\t%s\n' gil 'holds the GIL' cpu 'on CPU' unknown 'state unknown' \
        gil-wait 'waiting for the GIL' exception 'handling an exception' main 'the main thread' \
        idle 'neither holding the GIL nor on CPU' no-gil 'drop: holds the GIL' \
        no-cpu 'drop: on CPU' no-unknown 'drop: state unknown' \
        no-gil-wait 'drop: waiting for the GIL' no-exception 'drop: handling an exception' \
        no-main 'drop: the main thread' no-idle 'drop: neither holding the GIL nor on CPU'
end

complete -c tach-diff -l from -x -a 'tach gperf pprof sampler speedscope v8 chrome samples perf collapsed help' -d 'read the inputs as FORMAT'
complete -c tach-diff -s n -l normalize -d 'scale BASE counts to the NEW total'
complete -c tach-diff -s s -l strip-hex -d 'write hexadecimal numbers as 0x...'
complete -c tach-diff -l labels -x -a 'cpython\t"file:func:line" pyspy\t"func (file:line)" perf\t"as stackcollapse-perf.pl"' -d 'frame labels'
complete -c tach-diff -l perf-root -x -a 'comm pid tid' -d '--labels perf: root frame comm, comm-pid or comm-pid/tid'
complete -c tach-diff -l annotate -x -a 'kernel jit all' -d '--labels perf: mark kernel frames _[k], JIT frames _[j], or all'
complete -c tach-diff -l addrs -d '--labels perf: unknown symbols as [dso <address>]'
complete -c tach-diff -l full-paths -d 'keep full file paths'
complete -c tach-diff -l no-thread-frames -d 'no tid:N root frame; merge threads'
complete -c tach-diff -s o -l output -r -F -d 'write to FILE instead of standard output'
complete -c tach-diff -s f -l force -d 'accepted; the output is text'
complete -c tach-diff -s q -l quiet -d 'do not print warnings'
complete -c tach-diff -l progress -d 'Show a progress line from the start, terminal or not'
complete -c tach-diff -l no-progress -d 'Never show the progress line'
complete -c tach-diff -s v -l verbose -d 'print what was read and written'
complete -c tach-diff -l strict -d 'treat recoverable problems in the input as errors'
complete -c tach-diff -l max-depth -x -d 'reject stacks deeper than N frames'
complete -c tach-diff -l max-input -x -d 'hold at most SIZE bytes of a whole input (K M G suffixes)'
complete -c tach-diff -l thread -x -d 'keep only samples of thread TID (repeatable)'
complete -c tach-diff -l status -x -a '(__fish_complete_list , __tachfmt_states)' -d 'keep samples by thread state (comma-separated)'
complete -c tach-diff -l from-us -x -d 'keep samples at or after timestamp T (microseconds)'
complete -c tach-diff -l to-us -x -d 'keep samples before timestamp T (microseconds)'
complete -c tach-diff -s h -l help -d 'show help and exit'
complete -c tach-diff -s V -l version -d 'show version and exit'
# BASE and NEW: any files.
complete -c tach-diff -F
complete -c tach-diff -l binary-path -r -a '(__fish_complete_directories)' -d 'gperftools input: also look for binaries in DIR'
complete -c tach-diff -l no-symbolize -d 'gperftools input: do not read binaries; name frames by module and file offset'
complete -c tach-diff -l names -x -a 'full short mangled' -d 'gperftools input: function names'
complete -c tach-diff -l sample-index -x -d 'pprof input: the sample type used as weights'
complete -c tach-diff -l count-unit -x -a 'auto samples ns us ms' -d 'folded input: what a count is (samples, or a time)'
