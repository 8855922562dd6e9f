#!/usr/bin/env bash
# The folders' include arrows point one way (docs/ARCHITECTURE.md, "Layers"): every quoted
# #include of the library and the CLI names a header of its own folder or of a folder below it.
#   include/mjpeg  <- src/core  <- src/jpeg <- src/io
#                     src/core  <- cuda
#   src/pipeline (io, jpeg, cuda, core) <- src/api
#   src/quality (core) <- src/app (include/mjpeg, src/quality, src/plot only), src/tools
#   inside src/app: common <- input <- trace, quality <- compare, encode, join <- cli.cpp; lazy (the
#   executable's lazy-loading stubs) includes none of them
# The CLI reaches the library only through include/mjpeg, without exception (compare's nvJPEG
# peer lives in src/app/compare, outside the library).
# A bare name ("gpu_transform.hpp") is a header of the including file's folder, else of cuda/
# (its headers are included by bare name); a name found nowhere is reported.
# Usage: layering_test.sh SOURCE_DIR
set -euo pipefail
cd "$1"

# folder -> the folders it may include from, besides its own
declare -A allowed=(
  [include/mjpeg]=""
  [src/core]="include/mjpeg"
  [src/jpeg]="src/core include/mjpeg"
  [src/io]="src/jpeg src/core include/mjpeg"
  [cuda]="src/core include/mjpeg"
  [src/pipeline]="cuda src/io src/jpeg src/core include/mjpeg"
  [src/api]="src/pipeline cuda src/io src/jpeg src/core include/mjpeg"
  [src/quality]="src/core include/mjpeg"
  [src/plot]="include/mjpeg"
  [src]="include/mjpeg"
  [src/app]="src/app/encode src/app/compare src/app/quality src/app/trace src/app/join src/app/input src/app/common src/quality src/plot include/mjpeg"
  [src/app/join]="src/app/input src/app/common include/mjpeg"
  [src/app/encode]="src/app/quality src/app/input src/app/common include/mjpeg"
  [src/app/compare]="src/app/trace src/app/input src/app/common src/quality src/plot include/mjpeg"
  [src/app/quality]="src/app/input src/app/common src/quality src/plot include/mjpeg"
  [src/app/trace]="src/app/common src/plot include/mjpeg"
  [src/app/input]="src/app/common include/mjpeg"
  [src/app/common]="include/mjpeg"
  [src/app/lazy]=""
  [src/tools]="src/app/compare src/app/quality src/app/input src/app/common src/api src/pipeline cuda src/io src/jpeg src/core src/quality src/plot include/mjpeg"
)

# Sets `to` to the folder that a quoted include $1 of a file in folder $2 points at ("" when
# it is found nowhere). No subshell per include: the script stays quick on a busy machine.
target_of() {
  local inc=$1 from=$2
  to=""
  case $inc in
    mjpeg/*) [[ -e include/$inc ]] && to=include/mjpeg ;;
    */*) [[ -e src/$inc ]] && to=src/${inc%/*} ;;
    *)
      if [[ -e $from/$inc ]]; then to=$from
      elif [[ -e cuda/$inc ]]; then to=cuda
      fi ;;
  esac
}

bad=0
checked=0
for folder in "${!allowed[@]}"; do
  for file in "$folder"/*; do
    [[ -f $file ]] || continue
    case $file in *.cpp|*.hpp|*.cu|*.cuh|*.inc) ;; *) continue ;; esac
    while IFS= read -r inc; do
      checked=$((checked + 1))
      target_of "$inc" "$folder"
      if [[ -z $to ]]; then
        echo "layering: $file includes \"$inc\", which is no header of this tree" >&2
        bad=1
      elif [[ $to != "$folder" && " ${allowed[$folder]} " != *" $to "* ]]; then
        echo "layering: $file includes \"$inc\" ($to/): $folder/ may include only from ${allowed[$folder]:-itself}" >&2
        bad=1
      fi
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
  done
done
# Every folder with sources is in the table (a new folder must be placed in the layers).
while IFS= read -r dir; do
  [[ -n ${allowed[$dir]+x} ]] || { echo "layering: $dir/ has sources but no place in the layers" >&2; bad=1; }
done < <(find include src cuda -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' -o -name '*.inc' |
         xargs -n1 dirname | sort -u)
((checked > 300)) || { echo "layering: only $checked includes found; is this the source tree?" >&2; exit 1; }
((bad == 0)) || exit 1
echo "layering: $checked includes, every one points down"
