# fish completion for perf2tach(1)

function __tachfmt_states
    printf '%s\t%s\n' gil 'holds the GIL' cpu 'on CPU' unknown 'state unknown' \
        gil-wait 'waiting for the GIL' exception 'handling an exception' main 'the main thread' \
        idle 'neither holding the GIL nor on CPU' no-gil 'drop: holds the GIL' \
        no-cpu 'drop: on CPU' no-unknown 'drop: state unknown' \
        no-gil-wait 'drop: waiting for the GIL' no-exception 'drop: handling an exception' \
        no-main 'drop: the main thread' no-idle 'drop: neither holding the GIL nor on CPU'
end

complete -c perf2tach -l event -x -d 'read the samples of event NAME (default: the first event)'
complete -c perf2tach -l compression -x -a 'zstd\t"one zstd frame (default)" none\t"uncompressed"' -d 'sample compression'
complete -c perf2tach -l level -x -a '(seq 1 22)' -d 'zstd compression level (default 5)'
complete -c perf2tach -s o -l output -r -F -d 'write to FILE instead of standard output'
complete -c perf2tach -s f -l force -d 'write binary output to a terminal'
complete -c perf2tach -s q -l quiet -d 'do not print warnings'
complete -c perf2tach -l progress -d 'Show a progress line from the start, terminal or not'
complete -c perf2tach -l no-progress -d 'Never show the progress line'
complete -c perf2tach -s v -l verbose -d 'print what was read and written'
complete -c perf2tach -l strict -d 'treat recoverable problems in the input as errors'
complete -c perf2tach -l max-depth -x -d 'reject stacks deeper than N frames'
complete -c perf2tach -l max-input -x -d 'hold at most SIZE bytes of a whole input (K M G suffixes)'
complete -c perf2tach -l max-samples -x -d 'Fail when the input expands to more than N samples'
complete -c perf2tach -l thread -x -d 'keep only samples of thread TID (repeatable)'
complete -c perf2tach -l status -x -a '(__fish_complete_list , __tachfmt_states)' -d 'keep samples by thread state (comma-separated)'
complete -c perf2tach -l from-us -x -d 'keep samples at or after timestamp T (microseconds)'
complete -c perf2tach -l to-us -x -d 'keep samples before timestamp T (microseconds)'
complete -c perf2tach -s h -l help -d 'show help and exit'
complete -c perf2tach -s V -l version -d 'show version and exit'
# The input: perf script text (fish offers files by default).
