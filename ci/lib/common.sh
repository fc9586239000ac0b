#!/usr/bin/env bash
# Shared shell helpers: paths, logging, errors.
set -euo pipefail

: "${PROJECT_CACHE:=${XDG_CACHE_HOME:-$HOME/.cache}/mqbypass}"
export PROJECT_CACHE
PROJECT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export PROJECT_ROOT

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
warn() { printf 'warning: %s\n' "$*" >&2; }
die() {
	printf 'error: %s\n' "$*" >&2
	exit 1
}
