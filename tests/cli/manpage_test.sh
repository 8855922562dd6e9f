#!/usr/bin/env bash
# mjpeg(1) as built (src/package/manpage.cmake): the sections a man page has, rendered by groff
# without a warning and by man; every environment variable the program reads (getenv in src/,
# cuda/, include/; src/tools are repository tools) documented under ENVIRONMENT; every exit
# status the CLI uses under EXIT STATUS; every option of an example known to its command.
#   manpage_test.sh MJPEG MAN_PAGE SOURCE_DIR
# Exit 0 = pass, 77 = skipped (groff missing), anything else = fail.
set -uo pipefail
mjpeg=$1 page=$2 src=$3
die() { echo "FAIL: $*" >&2; exit 1; }
[[ -f $page ]] || die "no man page at $page"
command -v groff >/dev/null || { echo "SKIP: groff not found"; exit 77; }

# The sections, in the order of man-pages(7).
sections=$(grep '^\.SH ' "$page" | sed 's/^\.SH //; s/"//g' | tr '\n' '|')
[[ $sections == "NAME|SYNOPSIS|DESCRIPTION|COMMANDS|EXIT STATUS|ENVIRONMENT|FILES|EXAMPLES|SEE ALSO|" ]] ||
  die "sections: $sections"
# The DESCRIPTION says more than the synopsis.
[[ $(sed -n '/^\.SH DESCRIPTION/,/^\.SH /p' "$page" | grep -vc '^\.') -ge 10 ]] ||
  die "the DESCRIPTION is a few lines only"

# Rendered without a warning (-ww: all of them).
warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
[[ -z $warnings ]] || die "groff warns: $warnings"
if command -v man >/dev/null; then
  text=$(MANWIDTH=80 man -l "$page" 2>&1) || die "man -l failed: $text"
  grep -q '^EXIT STATUS' <<<"$text" && grep -q '^ENVIRONMENT' <<<"$text" &&
    grep -q -- '--quality' <<<"$text" || die "man -l does not render the page"
fi

# section NAME: the roff of section NAME.
section() { sed -n "/^\.SH $1\$/,/^\.SH /p" "$page"; }

# Every variable the program reads.
vars=$(grep -rhoE 'getenv\("[A-Za-z_][A-Za-z0-9_]*"\)' "$src/src" "$src/cuda" "$src/include" \
  --include='*.cpp' --include='*.hpp' --include='*.cu' --include='*.cuh' --exclude-dir=tools |
  sed -E 's/getenv\("(.*)"\)/\1/' | sort -u)
[[ -n $vars ]] || die "no getenv found in $src (wrong SOURCE_DIR?)"
env_section=$(section ENVIRONMENT)
for v in $vars; do
  grep -qx "\.B $v" <<<"$env_section" || die "the environment variable $v is not under ENVIRONMENT"
done
grep -q 'MJPEG_' <<<"$vars" || die "no MJPEG_ variable found in the sources"

# Every exit status: the CLI's codes (src/app/cli.hpp), the interrupt handler's _exit and the
# commands' interrupted returns (a forked helper's _exit is not mjpeg's).
codes=$( { sed -n 's/^ *kExit[A-Za-z]* = \([0-9]*\),.*/\1/p' "$src/src/app/cli.hpp"
           grep -hoE '_exit\([0-9]+\)' "$src/src/app/common/interrupt.cpp" | tr -dc '0-9\n'
           grep -rhoE 'return (was_interrupted \? )?[0-9]{3}' "$src/src/app" | tr -dc '0-9\n'
         } | sort -un)
[[ $(wc -w <<<"$codes") -ge 4 ]] || die "exit codes found: $codes"
exit_section=$(section "EXIT STATUS")
for c in $codes; do
  grep -qx "\.B $c" <<<"$exit_section" || die "exit status $c is not under EXIT STATUS"
done

# Each example's options are options of its command (the examples follow the program).
examples=$(section EXAMPLES | sed -n 's/^\.B "\(mjpeg .*\)"$/\1/p' | sed 's/\\-/-/g')
[[ $(wc -l <<<"$examples") -ge 8 ]] || die "fewer than 8 examples: $examples"
while read -r cmd rest; do
  sub=$(awk '{print $1}' <<<"$rest")
  help=$("$mjpeg" "$sub" --help) || die "mjpeg $sub --help failed (example: $cmd $rest)"
  for opt in $(grep -oE '(^| )--?[a-z][a-z-]*' <<<"${rest%%|*}"); do
    grep -qE -- "(^|[ ,])$opt([ ,=]|$)" <<<"$help" || die "example '$cmd $rest': $sub has no option $opt"
  done
done <<<"$examples"
echo "PASS: sections, rendering, $(wc -w <<<"$vars") environment variables, exit statuses $(tr '\n' ' ' <<<"$codes"), $(wc -l <<<"$examples") examples"
