#!/bin/bash
# Submits a split encode to Slurm: a job array of K parts and the join that waits for it.
#
#   submit.sh INPUT OUTPUT.avi K [encode options...]
#
# Prints the two job IDs ("ARRAY_ID JOIN_ID"). The parts go to OUTPUT.avi.parts/; each task
# asks for one GPU (--gres=gpu:1) when the cluster's nodes have any, and encodes on the CPU
# otherwise. Environment: MJPEG (the mjpeg program, default: on PATH; it must be reachable from
# the nodes, like INPUT and OUTPUT: a shared file system), MJPEG_MODE (cpu|sok|aok: insist on a
# mode), SBATCH_ARGS (more sbatch options for both jobs, e.g. "--partition=gpu").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
input=${1:?usage: submit.sh INPUT OUTPUT.avi K [encode options...]}
output=${2:?usage: submit.sh INPUT OUTPUT.avi K [encode options...]}
k=${3:?usage: submit.sh INPUT OUTPUT.avi K [encode options...]}
shift 3
[[ $k =~ ^[1-9][0-9]*$ ]] || { echo "submit.sh: K must be a positive number, not '$k'" >&2; exit 2; }
input=$(realpath "$input")
output=$(realpath -m "$output")
parts=$output.parts
gres=()
if sinfo -h -o %G 2>/dev/null | grep -q 'gpu'; then gres=(--gres=gpu:1); fi
# shellcheck disable=SC2086
array=$(sbatch --parsable ${SBATCH_ARGS:-} --chdir="$(dirname "$output")" --array="1-$k" \
  "${gres[@]}" "$here/encode_part.sbatch" "$input" "$parts" "$@")
array=${array%%;*}
# shellcheck disable=SC2086
join=$(sbatch --parsable ${SBATCH_ARGS:-} --chdir="$(dirname "$output")" \
  --dependency="afterok:$array" "$here/join_parts.sbatch" "$parts" "$output")
echo "${array} ${join%%;*}"
