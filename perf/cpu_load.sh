# Background CPU load for the benchmark scripts (sourced): one CPU-bound process per core at nice 19,
# so the measured processes keep their priority and lose only what they hand over (a yield, an idle
# core). start_load starts them, stop_load stops them (and the caller's EXIT trap should call it).
load_pids=()
start_load() {
  for _ in $(seq "$(nproc)"); do nice -n 19 sh -c 'while :; do :; done' & load_pids+=($!); done
  sleep 0.5
}
stop_load() {  # a second call (the EXIT trap after an explicit one) does nothing; a bare `wait` would wait for every job
  [ ${#load_pids[@]} -gt 0 ] || return 0
  kill "${load_pids[@]}" 2>/dev/null || true
  wait "${load_pids[@]}" 2>/dev/null || true
  load_pids=()
}
