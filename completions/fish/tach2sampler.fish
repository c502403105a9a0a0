# fish completion for tach2sampler(1)

function __tachfmt_states
    printf '%s\t%s\n' gil 'holds the GIL' cpu 'on CPU' unknown 'state unknown' \
        gil-wait 'waiting for the GIL' exception 'handling an exception' main 'the main thread' \
        idle 'neither holding the GIL nor on CPU' no-gil 'drop: holds the GIL' \
        no-cpu 'drop: on CPU' no-unknown 'drop: state unknown' \
        no-gil-wait 'drop: waiting for the GIL' no-exception 'drop: handling an exception' \
        no-main 'drop: the main thread' no-idle 'drop: neither holding the GIL nor on CPU'
end

complete -c tach2sampler -s o -l output -r -F -d 'write to FILE instead of standard output'
complete -c tach2sampler -s f -l force -d 'write binary output to a terminal'
complete -c tach2sampler -s q -l quiet -d 'do not print warnings'
complete -c tach2sampler -l progress -d 'Show a progress line from the start, terminal or not'
complete -c tach2sampler -l no-progress -d 'Never show the progress line'
complete -c tach2sampler -s v -l verbose -d 'print what was read and written'
complete -c tach2sampler -l strict -d 'treat recoverable problems in the input as errors'
complete -c tach2sampler -l max-depth -x -d 'reject stacks deeper than N frames'
complete -c tach2sampler -l max-input -x -d 'hold at most SIZE bytes of a whole input (K M G suffixes)'
complete -c tach2sampler -l max-samples -x -d 'fail when the input expands to more than N samples'
complete -c tach2sampler -l thread -x -d 'keep only samples of thread TID (repeatable)'
complete -c tach2sampler -l status -x -a '(__fish_complete_list , __tachfmt_states)' -d 'keep samples by thread state (comma-separated)'
complete -c tach2sampler -l from-us -x -d 'keep samples at or after timestamp T (microseconds)'
complete -c tach2sampler -l to-us -x -d 'keep samples before timestamp T (microseconds)'
complete -c tach2sampler -s h -l help -d 'show help and exit'
complete -c tach2sampler -s V -l version -d 'show version and exit'
complete -c tach2sampler -l from -x -a 'tach gperf pprof sampler speedscope v8 chrome samples perf collapsed help' -d 'Read the input as FORMAT, not the detected format'
complete -c tach2sampler -l binary-path -r -a '(__fish_complete_directories)' -d 'gperftools input: also look for binaries in DIR'
complete -c tach2sampler -l no-symbolize -d 'gperftools input: do not read binaries; name frames by module and file offset'
complete -c tach2sampler -l names -x -a 'full short mangled' -d 'gperftools input: function names'
complete -c tach2sampler -l sample-index -x -d 'pprof input: the sample type used as weights'
complete -c tach2sampler -l count-unit -x -a 'auto samples ns us ms' -d 'folded input: what a count is (samples, or a time)'
