# fish completion for tach-merge(1)

function __tachfmt_states
    printf '%s\t%s\n' gil 'holds the GIL' cpu 'on CPU' unknown 'state unknown' \
        gil-wait 'waiting for the GIL' exception 'handling an exception' main 'the main thread' \
        idle 'neither holding the GIL nor on CPU' no-gil 'drop: holds the GIL' \
        no-cpu 'drop: on CPU' no-unknown 'drop: state unknown' \
        no-gil-wait 'drop: waiting for the GIL' no-exception 'drop: handling an exception' \
        no-main 'drop: the main thread' no-idle 'drop: neither holding the GIL nor on CPU'
end

complete -c tach-merge -l from -x -a 'tach gperf pprof sampler speedscope v8 chrome samples perf collapsed help' -d 'read the inputs as FORMAT'
complete -c tach-merge -l concat -d 'write the inputs one after another'
complete -c tach-merge -l tag-inputs -d 'give each input an outermost frame named after it'
complete -c tach-merge -l compression -x -a 'zstd none' -d 'sample compression'
complete -c tach-merge -l level -x -d 'zstd compression level, 1-22'
complete -c tach-merge -l max-samples -x -d 'fail when an input expands to more than N samples'
complete -c tach-merge -l counts-as-samples -d 'write pprof weights that are not a time as samples'
complete -c tach-merge -s f -l force -d 'write binary output to a terminal'
complete -c tach-merge -s o -l output -r -F -d 'write to FILE instead of standard output'
complete -c tach-merge -s q -l quiet -d 'do not print warnings'
complete -c tach-merge -l progress -d 'Show a progress line from the start, terminal or not'
complete -c tach-merge -l no-progress -d 'Never show the progress line'
complete -c tach-merge -s v -l verbose -d 'print what was read and written'
complete -c tach-merge -l strict -d 'treat recoverable problems in the input as errors'
complete -c tach-merge -l max-depth -x -d 'reject stacks deeper than N frames'
complete -c tach-merge -l max-input -x -d 'hold at most SIZE bytes of a whole input (K M G suffixes)'
complete -c tach-merge -l thread -x -d 'keep only samples of thread TID (repeatable)'
complete -c tach-merge -l status -x -a '(__fish_complete_list , __tachfmt_states)' -d 'keep samples by thread state (comma-separated)'
complete -c tach-merge -l from-us -x -d 'keep samples at or after timestamp T (microseconds)'
complete -c tach-merge -l to-us -x -d 'keep samples before timestamp T (microseconds)'
complete -c tach-merge -s h -l help -d 'show help and exit'
complete -c tach-merge -s V -l version -d 'show version and exit'
# The inputs: any files.
complete -c tach-merge -F
complete -c tach-merge -l binary-path -r -a '(__fish_complete_directories)' -d 'gperftools input: also look for binaries in DIR'
complete -c tach-merge -l no-symbolize -d 'gperftools input: do not read binaries; name frames by module and file offset'
complete -c tach-merge -l names -x -a 'full short mangled' -d 'gperftools input: function names'
complete -c tach-merge -l sample-index -x -d 'pprof input: the sample type used as weights'
complete -c tach-merge -l count-unit -x -a 'auto samples ns us ms' -d 'folded input: what a count is (samples, or a time)'
