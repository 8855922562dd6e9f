#!/usr/bin/env bash
# The test scripts run without `set -e` (they test exit codes), so in `A && same_bytes x y` a
# failing A skips the comparison and the case passes without having compared anything. This
# check finds such statements: a command list whose last `&&` leads to an assertion (a
# function of these scripts that can call `die`, directly or through another one) and that no
# `|| ...` follows. Write `A || die "..."; same_bytes x y` instead, or an `if` for a real
# condition.
#   shell_assertions_test.sh FILE...        exit 0: none found; 1: each one listed
set -uo pipefail
(($#)) || { echo "usage: $0 FILE..." >&2; exit 2; }

# The assertions: functions defined in the files (at the start of a line, up to the next "}" at
# the start of a line) whose body calls die or, to any depth, another assertion.
assertions=$(awk '
  /^[A-Za-z_][A-Za-z0-9_]*\(\) *\{/ {
    name = $0
    sub(/\(.*/, "", name)
    body[name] = $0
    sub(/^[^{]*\{/, "", body[name])
    if ($0 ~ /\}[ \t]*$/) name = ""  # on one line
    next
  }
  name != "" && /^}/ { name = ""; next }
  name != "" { body[name] = body[name] " " $0 }
  END {
    for (f in body) if (body[f] ~ /(^|[^A-Za-z0-9_])die([^A-Za-z0-9_]|$)/) is[f] = 1
    do {
      changed = 0
      for (f in body) if (!(f in is))
        for (g in is) if (body[f] ~ ("(^|[^A-Za-z0-9_])" g "([^A-Za-z0-9_]|$)")) { is[f] = 1; changed = 1; break }
    } while (changed)
    for (f in is) print f
  }' "$@")
for f in "$@"; do [[ -r $f ]] || { echo "cannot read $f" >&2; exit 2; }; done

awk -v names="$assertions" '
BEGIN { n = split(names, list, "\n"); for (i = 1; i <= n; ++i) assertion[list[i]] = 1 }
# Statements of the scripts, with quoted text, comments and here-documents blanked out; a
# statement goes on over lines that end in &&, || or |, or with a backslash.
function flush(   text, n, i, tok, ops, last_and, first, word) {
  text = stmt
  stmt = ""
  if (text !~ /&&/) return
  # The condition of an if or a loop is a test of its own.
  if (text ~ /^[ \t]*(if|elif|while|until)[ \t]/) return
  # Conditions inside [[ ]] and (( )) are not command lists.
  gsub(/\[\[[^]]*\]\]/, " COND ", text)
  gsub(/\(\([^)]*\)\)/, " COND ", text)
  n = split(text, tok, /(&&|\|\|)/)
  if (n < 2) return
  # Which operators, in order.
  ops = text
  gsub(/[^&|]/, "", ops)
  gsub(/\|\|/, "O", ops)
  gsub(/&&/, "A", ops)
  gsub(/[&|]/, "", ops)
  last_and = 0
  for (i = 1; i <= length(ops); ++i) if (substr(ops, i, 1) == "A") last_and = i
  if (!last_and) return
  if (index(substr(ops, last_and + 1), "O")) return   # a handler follows: || die, || true ...
  first = tok[last_and + 1]
  sub(/^[ \t(!{]+/, "", first)
  split(first, word, /[ \t;)}]/)
  if (word[1] in assertion)
    printf "%s:%d: `... && %s` drops out when the command before it fails\n", stmt_file, stmt_line, word[1]
  found += (word[1] in assertion)
}
FNR == 1 { if (stmt != "") flush(); quote = ""; heredoc = "" }
{
  line = $0
  if (heredoc != "") {
    t = line
    sub(/^[\t]+/, "", t)
    if (t == heredoc) heredoc = ""
    next
  }
  # Blank out quoted text (which may span lines) and comments, char by char.
  out = ""
  for (i = 1; i <= length(line); ++i) {
    c = substr(line, i, 1)
    if (quote == "\x27") { if (c == "\x27") quote = ""; out = out " "; continue }
    if (quote == "\"") {
      if (c == "\\") { ++i; out = out "  "; continue }
      if (c == "\"") quote = ""
      out = out " "
      continue
    }
    if (c == "\\" && i < length(line)) { out = out c substr(line, i + 1, 1); ++i; continue }
    if (c == "\x27" || c == "\"") { quote = c; out = out " "; continue }
    if (c == "#" && (i == 1 || substr(line, i - 1, 1) ~ /[ \t;]/)) break
    out = out c
  }
  # A here-document starts after this line.
  if (match(out, /<<-?[ \t]*[A-Za-z_]+/)) {
    heredoc = substr(out, RSTART, RLENGTH)
    sub(/^<<-?[ \t]*/, "", heredoc)
  }
  if (match(line, /<<-?[ \t]*[\x27"][A-Za-z_]+[\x27"]/)) {
    heredoc = substr(line, RSTART, RLENGTH)
    gsub(/^<<-?[ \t]*|[\x27"]/, "", heredoc)
  }
  if (stmt == "") { stmt_file = FILENAME; stmt_line = FNR }
  stmt = stmt " " out
  if (quote != "" || out ~ /(&&|\|\||\||\\)[ \t]*$/) next
  flush()
}
END { if (stmt != "") flush(); exit found > 0 }
' "$@"
