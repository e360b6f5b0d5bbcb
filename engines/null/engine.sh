#!/bin/sh
# The null engine of timerbench (docs/engines.md): answers every request at once and does
# nothing, so the harness's wall time around it is the protocol's own cost (process start,
# argument passing, answer parsing). Its replay writes an empty log and is not verified.
log=""
for arg in "$@"; do
    case "$arg" in
        log=*) log="${arg#log=}" ;;
    esac
done
if [ -n "$log" ]; then
    : > "$log"
    replay=',"replay":{"operations":0,"started":0,"fired":0,"stopped":0,"misses":0,"pending":0,"final_clock":0,"log":"'"$log"'"}'
fi
printf '{"protocol":2,"engine":"null","runtime":"sh","runtime_version":"","status":"ok","unit":"nothing","samples_ns":[]%s}\n' "$replay"
