#!/usr/bin/env bash
# Validate the GitHub Actions workflows; exit non-zero on any error.
#   1. the schema, with action-validator (@action-validator/cli from npm:
#      Debian packages no actionlint), installed pinned into $PROJECT_CACHE/npm;
#   2. what a schema does not see: every `needs:` names a job and the jobs
#      form no cycle; every `python3 -m ci.pipeline MODE --only ...` names the stages
#      its stages need (Pipeline.select, as the pipeline itself checks);
#   3. shellcheck on every `run:` script (bash -e -o pipefail, as the runner
#      runs it; ${{ ... }} expressions stand in as a word).
# Installs nodejs and npm (Debian), shellcheck and python3-yaml when missing.
# Usage: ci/lint-workflow.sh [WORKFLOW.yml...]   (default .github/workflows/*.yml)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/common.sh
source "$here/lib/common.sh"

VALIDATOR_VERSION=0.6.0
npm_prefix="$PROJECT_CACHE/npm"
validator="$npm_prefix/node_modules/.bin/action-validator"

if [ $# -gt 0 ]; then
	files=("$@")
else
	files=("$PROJECT_ROOT"/.github/workflows/*.yml)
fi
for f in "${files[@]}"; do
	[ -f "$f" ] || die "no workflow file $f"
done

need=()
command -v npm >/dev/null || need+=(nodejs npm)
command -v shellcheck >/dev/null || need+=(shellcheck)
/usr/bin/python3 -c 'import yaml' 2>/dev/null || need+=(python3-yaml)
if [ ${#need[@]} -gt 0 ]; then
	[ "$(id -u)" -eq 0 ] || die "missing ${need[*]} and not root: install them"
	log "installing ${need[*]} (Debian)"
	apt-get update -qq || die "apt-get update failed: Debian archive unreachable?"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2 ||
		die "apt-get install failed for: ${need[*]}"
fi
installed=$(node -p "require('$npm_prefix/node_modules/@action-validator/cli/package.json').version" 2>/dev/null || true)
if [ "$installed" != "$VALIDATOR_VERSION" ]; then
	log "installing @action-validator/cli@$VALIDATOR_VERSION (npm) into $npm_prefix"
	npm install --prefix "$npm_prefix" --no-audit --no-fund --no-save --silent \
		"@action-validator/cli@$VALIDATOR_VERSION" >&2 || die "npm install failed: registry unreachable?"
fi

status=0
for f in "${files[@]}"; do
	if "$validator" "$f"; then
		log "schema: ok: $f"
	else
		warn "schema: errors in $f"
		status=1
	fi
done

# From the top of the tree, where the ci package is; the workflows by their
# absolute paths.
abs_files=()
for f in "${files[@]}"; do
	abs_files+=("$(realpath "$f")")
done
(cd "$PROJECT_ROOT" && exec /usr/bin/python3 - "${abs_files[@]}") <<'PY' || status=1
import re
import subprocess
import sys
from pathlib import Path

import yaml

from ci import pipeline

errors = []
for path in sys.argv[1:]:
    jobs = (yaml.safe_load(Path(path).read_text()) or {}).get("jobs") or {}
    graph = {}
    for name, job in jobs.items():
        needs = job.get("needs", [])
        graph[name] = [needs] if isinstance(needs, str) else list(needs)
        errors += [f"{path}: job {name}: needs unknown job {n}" for n in graph[name] if n not in jobs]
        for i, step in enumerate(job.get("steps", []), 1):
            run = step.get("run")
            if not run:
                continue
            where = f"{path}: job {name}, step {i} ({step.get('name', run.splitlines()[0])})"
            # The pipeline is a module of the ci package: run by its path it cannot import ci.
            errors += [f"{where}: runs {m[0]}: use python3 -m ci.pipeline"
                       for m in re.finditer(r"python3\s+ci/pipeline\.py", run)]
            for m in re.finditer(r"-m ci\.pipeline\s+(\S+)\s+--only"
                                 r"((?:[ \t]+[\w-]+)+)", run):
                try:
                    pipeline.Pipeline.select(m[1], m[2].split())
                except (pipeline.UsageError, KeyError) as err:
                    errors.append(f"{where}: {err}")
            script = "set -eo pipefail\n" + re.sub(r"\$\{\{.*?\}\}", "GHA_EXPR", run)
            res = subprocess.run(["shellcheck", "-s", "bash", "-f", "gcc", "-"], input=script,
                                 text=True, capture_output=True)
            if res.returncode:
                errors += [f"{where}: shellcheck: {ln}" for ln in res.stdout.splitlines()]
    state = {}

    def visit(n, trail):
        if state.get(n) == "done":
            return
        if state.get(n) == "open":
            errors.append(f"{path}: needs cycle: {' -> '.join(trail + [n])}")
            return
        state[n] = "open"
        for d in graph.get(n, []):
            visit(d, trail + [n])
        state[n] = "done"

    for n in graph:
        visit(n, [])
    print(f"[lint-workflow] structure: {len(jobs)} jobs checked in {path}", file=sys.stderr)
for e in errors:
    print(f"error: {e}", file=sys.stderr)
sys.exit(1 if errors else 0)
PY
[ $status -eq 0 ] || die "workflow lint failed"
log "workflow lint: ok (${files[*]##*/})"
