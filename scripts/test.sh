#!/usr/bin/env bash
# Runs the tests (scripts/run-tests.ts says how; with test files as arguments, only those). Tests use
# the real OS keychain, so on Linux they run inside a private D-Bus session with an unlocked
# gnome-keyring, never touching the keyring of the person at the machine.
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

# The runner (scripts/run-tests.ts) runs on the system's Node: the first `node` on PATH outside
# node_modules/.bin, which npm puts first.
node_system="$(PATH="$(printf %s "$PATH" | tr ':' '\n' | grep -v '/node_modules/\.bin$' | paste -sd:)" command -v node)"
"$node_system" --import tsx scripts/run-tests.ts "$@"
