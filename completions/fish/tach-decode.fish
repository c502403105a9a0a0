# fish completion for tach-decode(1)

function __tachfmt_states
    printf '%s\t%s\n' gil 'holds the GIL' cpu 'on CPU' unknown 'state unknown' \
        gil-wait 'waiting for the GIL' exception 'handling an exception' main 'the main thread' \
        idle 'neither holding the GIL nor on CPU' no-gil 'drop: holds the GIL' \
        no-cpu 'drop: on CPU' no-unknown 'drop: state unknown' \
        no-gil-wait 'drop: waiting for the GIL' no-exception 'drop: handling an exception' \
        no-main 'drop: the main thread' no-idle 'drop: neither holding the GIL nor on CPU'
end

complete -c tach-decode -s F -l format -x -a 'collapsed\t"folded stacks for flamegraph.pl" samples\t"every sample, lossless text" info\t"header, counts and record statistics"' -d 'output format'
complete -c tach-decode -l labels -x -a 'cpython\t"file:func:line" pyspy\t"func (file:line)" perf\t"as stackcollapse-perf.pl"' -d 'collapsed frame labels'
complete -c tach-decode -l perf-root -x -a 'comm pid tid' -d '--labels perf: root frame comm, comm-pid or comm-pid/tid'
complete -c tach-decode -l annotate -x -a 'kernel jit all' -d '--labels perf: mark kernel frames _[k], JIT frames _[j], or all'
complete -c tach-decode -l addrs -d '--labels perf: unknown symbols as [dso <address>]'
complete -c tach-decode -l event -x -d 'perf script input: read the samples of event NAME'
complete -c tach-decode -l full-paths -d 'collapsed: keep full file paths'
complete -c tach-decode -l no-thread-frames -d 'collapsed: no tid:N root frame; merge threads'
complete -c tach-decode -s o -l output -r -F -d 'write to FILE instead of standard output'
complete -c tach-decode -s f -l force -d 'write binary output to a terminal'
complete -c tach-decode -s q -l quiet -d 'do not print warnings'
complete -c tach-decode -l progress -d 'Show a progress line from the start, terminal or not'
complete -c tach-decode -l no-progress -d 'Never show the progress line'
complete -c tach-decode -s v -l verbose -d 'print what was read and written'
complete -c tach-decode -l strict -d 'treat recoverable problems in the input as errors'
complete -c tach-decode -l max-depth -x -d 'reject stacks deeper than N frames'
complete -c tach-decode -l max-input -x -d 'hold at most SIZE bytes of a whole input (K M G suffixes)'
complete -c tach-decode -l max-samples -x -d 'Fail when the input expands to more than N samples'
complete -c tach-decode -l thread -x -d 'keep only samples of thread TID (repeatable)'
complete -c tach-decode -l status -x -a '(__fish_complete_list , __tachfmt_states)' -d 'keep samples by thread state (comma-separated)'
complete -c tach-decode -l from-us -x -d 'keep samples at or after timestamp T (microseconds)'
complete -c tach-decode -l to-us -x -d 'keep samples before timestamp T (microseconds)'
complete -c tach-decode -s h -l help -d 'show help and exit'
complete -c tach-decode -s V -l version -d 'show version and exit'
# The input: TACH files.
complete -c tach-decode -l from -x -a 'tach gperf pprof sampler speedscope v8 chrome samples perf collapsed help' -d 'Read the input as FORMAT, not the detected format'
complete -c tach-decode -l binary-path -r -a '(__fish_complete_directories)' -d 'gperftools input: also look for binaries in DIR'
complete -c tach-decode -l no-symbolize -d 'gperftools input: do not read binaries; name frames by module and file offset'
complete -c tach-decode -l names -x -a 'full short mangled' -d 'gperftools input: function names'
complete -c tach-decode -l sample-index -x -d 'pprof input: the sample type used as weights'
complete -c tach-decode -l count-unit -x -a 'auto samples ns us ms' -d 'folded input: what a count is (samples, or a time)'
