#!/usr/bin/env bash
# The README's library sample is examples/encode_frames/minimal.cpp, which the install test
# builds against the installed package: the C++ block after the marker line
# "<!-- examples/encode_frames/minimal.cpp -->" must equal that file.
# Usage: readme_sample_test.sh SOURCE_DIR
set -euo pipefail
src=$1
block=$(awk '/<!-- examples\/encode_frames\/minimal.cpp -->/ {found=1; next}
             found && /^```cpp$/ {inside=1; next}
             inside && /^```$/ {exit}
             inside {print}' "$src/README.md")
[ -n "$block" ] || { echo "README.md: no sample after the minimal.cpp marker" >&2; exit 1; }
if ! diff <(printf '%s\n' "$block") "$src/examples/encode_frames/minimal.cpp"; then
  echo "README.md's sample differs from examples/encode_frames/minimal.cpp (diff above)" >&2
  exit 1
fi
echo "readme sample: same as examples/encode_frames/minimal.cpp"
