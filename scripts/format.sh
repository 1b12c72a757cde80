#!/usr/bin/env bash
# The layout of the C++ sources (.clang-format at the top of the tree).
#   scripts/format.sh            rewrites every source file in place
#   scripts/format.sh --check    lists the files clang-format would change; exits 1 if any
# Sources: include/, tests/, examples/, benchmarks/, tools/ (.hpp, .ipp, .cpp, .cu).
set -euo pipefail
cd "$(dirname "$0")/.."

check=0
for arg in "$@"; do
  case "$arg" in
    --check) check=1 ;;
    *) echo "format.sh: unknown argument '$arg' (only --check)" >&2; exit 2 ;;
  esac
done
command -v clang-format >/dev/null || { echo "format.sh: clang-format not found (scripts/setup.sh installs it)" >&2; exit 2; }

# the tracked sources in a git checkout, else every source below those folders
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- include tests examples benchmarks tools | grep -E '\.(hpp|ipp|cpp|cu)$')
else
  mapfile -t files < <(find include tests examples benchmarks tools -type f \( -name '*.hpp' -o -name '*.ipp' -o -name '*.cpp' -o -name '*.cu' \) | sort)
fi
if [[ "$check" == 1 ]]; then
  bad=()
  for f in "${files[@]}"; do
    clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if ((${#bad[@]})); then
    echo "format.sh: ${#bad[@]} file(s) differ from .clang-format (run scripts/format.sh):" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format.sh: ${#files[@]} files follow .clang-format"
else
  clang-format -i "${files[@]}"
fi
