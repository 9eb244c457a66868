#!/bin/sh
# The stand-in base's entrypoint, behaving as the official Node.js images' does: arguments
# that are not a program to run (options such as --version, a script name, a file that is
# not executable) are handed to node; anything else runs as it is. exec, so that the
# program becomes PID 1 and receives the container's stop signal itself.
set -e
if [ "$#" -eq 0 ]; then
  set -- node
else
  case "$1" in
    -*) set -- node "$@" ;;
    *)
      if ! command -v -- "$1" >/dev/null 2>&1 || { [ -f "$1" ] && [ ! -x "$1" ]; }; then
        set -- node "$@"
      fi
      ;;
  esac
fi
exec "$@"
