#!/usr/bin/env bash
# Regenerate the image's hashed locks (deploy/Dockerfile installs with --require-hashes):
#   deploy/requirements.lock  the runtime dependencies and the hyperscan extra
#   deploy/build.lock         the build backend (pyproject's [build-system] requires)
# Universal resolution keeps every wheel's hash of each pinned version, so one file serves
# linux/amd64 and linux/arm64 alike. Needs uv (`pip install uv`) and the package index.
set -euo pipefail
cd "$(dirname "$0")/.."

command="bash scripts/lock_image.sh"
uv pip compile pyproject.toml --extra hyperscan --universal --python-version 3.12 \
    --generate-hashes --custom-compile-command "$command" --quiet -o deploy/requirements.lock
python3 -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"]))' \
    | uv pip compile - --universal --python-version 3.12 \
        --generate-hashes --custom-compile-command "$command" --quiet -o deploy/build.lock
