#!/usr/bin/env bash
# How fast `kg` starts (docs/benchmarks.md, "Start-up"):  bash evals/startup.sh [RUNS]
#
# In one run, for this checkout: `python -c "import typer, rich.console"` (the yardstick),
# `kg --help`, a usage error, and `kg ask` on an initialised SQLite database (offline
# synthesizer). Each is timed twice: wall time (hyperfine: mean and min of RUNS) and the CPU the
# process itself used (perf stat task-clock, mean of RUNS), which a shared, loaded machine
# inflates far less than wall time. Both with bytecode cached (as after `pip install`) and
# without it (PYTHONDONTWRITEBYTECODE=1: every run compiles the project's modules again).
# Then how much of `kg ask` is imports: `python -X importtime`, top-level modules summed (min of
# 5 runs, bytecode cached). KG_ROOT=DIR times another checkout with this script.
# Needs hyperfine (apt-get install -y hyperfine) and perf.
set -euo pipefail
root=${KG_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
runs=${1:-30}
py=${PYTHON:-$(command -v python3)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"  # python -c puts the working folder first on sys.path: never a checkout
export PYTHONPATH=$root KG_SYNTHESIZER=offline DEEPSEEK_API_KEY= KG_DATABASE_URL=
printf '#!/bin/sh\nexec %s -c "import sys; from control_plane.surfaces.cli import app; sys.argv[0] = \\"kg\\"; app()" "$@"\n' "$py" >"$work/kg"
chmod +x "$work/kg"
db="sqlite:///$work/kg.sqlite3"
"$work/kg" --db "$db" init >/dev/null
question="What does RAG build on?"

cpu_ms() {  # mean task-clock of RUNS runs, in ms
  perf stat -r "$runs" -x, -e task-clock -- "$@" >/dev/null 2>"$work/perf" || true
  grep task-clock "$work/perf" | cut -d, -f1
}

for mode in bytecode source; do
  if [ "$mode" = bytecode ]; then
    unset PYTHONDONTWRITEBYTECODE
    export PYTHONPYCACHEPREFIX=$work/pycache
    "$work/kg" --db "$db" ask "$question" >/dev/null  # writes the bytecode once
  else
    export PYTHONDONTWRITEBYTECODE=1
    unset PYTHONPYCACHEPREFIX
  fi
  echo "== $mode ($(uptime | sed 's/.*load average/load average/'))"
  hyperfine -N -i --warmup 3 --runs "$runs" --style none --export-json "$work/$mode.json" \
    "$py -c 'import typer, rich.console'" \
    "$work/kg --help" \
    "$work/kg edge add x --bogus" \
    "$work/kg --db $db ask '$question'" >/dev/null
  "$py" - "$work/$mode.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print(f"  wall  mean {r['mean'] * 1000:7.1f} ms  min {r['min'] * 1000:7.1f} ms  {r['command'].split('/')[-1][:60]}")
PY
  printf '  cpu   %7.1f ms  import typer, rich.console\n' "$(cpu_ms "$py" -c 'import typer, rich.console')"
  printf '  cpu   %7.1f ms  kg --help\n' "$(cpu_ms "$work/kg" --help)"
  printf '  cpu   %7.1f ms  kg edge add x --bogus\n' "$(cpu_ms "$work/kg" edge add x --bogus)"
  printf '  cpu   %7.1f ms  kg ask\n' "$(cpu_ms "$work/kg" --db "$db" ask "$question")"
done
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX=$work/pycache
imports_ms() {  # min over 5 runs of the imports' wall time, in ms
  for _ in 1 2 3 4 5; do
    "$py" -X importtime -c "import sys; from control_plane.surfaces.cli import app; sys.argv[0] = 'kg'; app()" "$@" 2>&1 >/dev/null |
      awk -F'|' '/^import time:/ && $3 !~ /^  / { s += $2 } END { print s / 1000 }'
  done | sort -n | head -1
}
echo "== imports ($(uptime | sed 's/.*load average/load average/'))"
printf '  imports %7.1f ms  kg --help\n' "$(imports_ms --help)"
printf '  imports %7.1f ms  kg ask\n' "$(imports_ms --db "$db" ask "$question")"
