# fish completion for tach-encode(1)

function __tachfmt_states
    printf '%s\t%s\n' gil 'holds the GIL' cpu 'on CPU' unknown 'state unknown' \
        gil-wait 'waiting for the GIL' exception 'handling an exception' main 'the main thread' \
        idle 'neither holding the GIL nor on CPU' no-gil 'drop: holds the GIL' \
        no-cpu 'drop: on CPU' no-unknown 'drop: state unknown' \
        no-gil-wait 'drop: waiting for the GIL' no-exception 'drop: handling an exception' \
        no-main 'drop: the main thread' no-idle 'drop: neither holding the GIL nor on CPU'
end

complete -c tach-encode -l compression -x -a 'zstd\t"one zstd frame (default)" none\t"uncompressed"' -d 'sample compression'
complete -c tach-encode -l level -x -a '(seq 1 22)' -d 'zstd compression level (default 5)'
complete -c tach-encode -s o -l output -r -F -d 'write to FILE instead of standard output'
complete -c tach-encode -s f -l force -d 'write binary output to a terminal'
complete -c tach-encode -s q -l quiet -d 'do not print warnings'
complete -c tach-encode -l progress -d 'Show a progress line from the start, terminal or not'
complete -c tach-encode -l no-progress -d 'Never show the progress line'
complete -c tach-encode -s v -l verbose -d 'print what was read and written'
complete -c tach-encode -l strict -d 'treat recoverable problems in the input as errors'
complete -c tach-encode -l max-depth -x -d 'reject stacks deeper than N frames'
complete -c tach-encode -l max-input -x -d 'hold at most SIZE bytes of a whole input (K M G suffixes)'
complete -c tach-encode -l max-samples -x -d 'Fail when the input expands to more than N samples'
complete -c tach-encode -l thread -x -d 'keep only samples of thread TID (repeatable)'
complete -c tach-encode -l status -x -a '(__fish_complete_list , __tachfmt_states)' -d 'keep samples by thread state (comma-separated)'
complete -c tach-encode -l from-us -x -d 'keep samples at or after timestamp T (microseconds)'
complete -c tach-encode -l to-us -x -d 'keep samples before timestamp T (microseconds)'
complete -c tach-encode -s h -l help -d 'show help and exit'
complete -c tach-encode -s V -l version -d 'show version and exit'
# The input: a samples text file (fish offers files by default).
