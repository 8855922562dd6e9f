#!/usr/bin/env python3
"""Search for the spectral-selection scan script that `--progressive` writes.

For the training frames of every clip (the ones src/tools/tune_tables.py cuts, 8 per clip, from
its cache build/tuning/<clip>.train.nut; run `tune_tables.py --write` or `--check` once first,
or give --cache), at several qualities of the `--tune psnr` preset (docs/tuning/psnr.txt),
every candidate script is run through

    cjpeg -qtables <the quality's section> -qslots 0,1,1 -sample 2x2 -optimize -scans SCRIPT

and the total bytes are compared with the sequential `-optimize` file. Only the Python
standard library, ffmpeg (to cut the frames to PPM) and cjpeg are needed. Prints a table
(relative size per quality) and writes it with --out (docs/tuning/scans.md).

Every candidate is spectral selection only (Ah = Al = 0): a DC scan of all components
interleaved, then AC bands per component; libjpeg codes each with its own optimal tables.
"""
import argparse
import concurrent.futures as cf
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def bands(cuts):
    """[a, b, c] -> [(1, a), (a+1, b), ..., (.., 63)]"""
    out, lo = [], 1
    for c in list(cuts) + [63]:
        out.append((lo, c))
        lo = c + 1
    return out


def script(luma_cuts, chroma_cuts):
    lines = ["0,1,2: 0-0, 0, 0;"]
    lines += [f"0: {a}-{b}, 0, 0;" for a, b in bands(luma_cuts)]
    for c in (1, 2):
        lines += [f"{c}: {a}-{b}, 0, 0;" for a, b in bands(chroma_cuts)]
    return "\n".join(lines) + "\n"


LUMA = [(), (5,), (9,), (2, 9), (3, 9), (2, 5), (5, 20), (2, 9, 27), (2, 5, 14), (1, 5, 14),
        (2, 5, 9, 20), (1, 2, 5, 9, 20), (2, 9, 20), (2, 7, 20)]
CHROMA = [(), (2,), (5,), (2, 9)]


# Second round (--round 2): neighbours of the best of the first round.
LUMA2 = [(2, 9), (2, 7), (2, 8), (2, 10), (2, 11), (2, 12), (2, 14), (1, 9), (2, 9, 35),
         (2, 9, 45), (2, 4, 9)]


def candidates(round_no=1):
    if round_no == 2:
        return [(lc, ()) for lc in LUMA2] + [((2, 9), (1,)), ((2, 9), (3,))]
    out = []
    for lc in LUMA:
        out.append((lc, ()))
    for cc in CHROMA[1:]:
        for lc in [(2, 9), (2, 5, 14), (2, 9, 20)]:
            out.append((lc, cc))
    return out


def name(lc, cc):
    f = lambda cuts: "1-63" if not cuts else ",".join(f"{a}-{b}" for a, b in bands(cuts))
    return f"Y {f(lc)} / C {f(cc)}"


def psnr_section(quality):
    text = open(os.path.join(ROOT, "docs/tuning/psnr.txt")).read()
    sec = text.split(f"# quality {quality}\n", 1)[1].split("\n\n", 1)[0]
    return sec + "\n"


def size_of(args):
    cmd, ppm = args
    r = subprocess.run(cmd + [ppm], stdout=subprocess.PIPE, check=True)
    return len(r.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", default=os.path.join(ROOT, "build/tuning"))
    ap.add_argument("--qualities", default="30,50,75,90")
    ap.add_argument("--frames", type=int, default=4, help="training frames per clip (of 8)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--round", type=int, default=1, choices=(1, 2),
                    help="candidate list: 1 the broad search, 2 neighbours of its best")
    ap.add_argument("--out", help="write the table as markdown here")
    args = ap.parse_args()
    clips = sorted(f[:-len(".train.nut")] for f in os.listdir(args.cache)
                   if f.endswith(".train.nut"))
    if not clips:
        sys.exit(f"no <clip>.train.nut in {args.cache}: run src/tools/tune_tables.py first")
    tmp = tempfile.mkdtemp(prefix="scans-")
    ppms = []
    for c in clips:
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", os.path.join(args.cache, c + ".train.nut"),
                        "-fps_mode", "passthrough", "-frames:v", str(args.frames),
                        os.path.join(tmp, c + "_%d.ppm")], check=True)
        got = [os.path.join(tmp, f"{c}_{i}.ppm") for i in range(1, args.frames + 1)]
        ppms += [p for p in got if os.path.exists(p)]
    quals = [int(q) for q in args.qualities.split(",")]
    clip_of = [os.path.basename(p).rsplit("_", 1)[0] for p in ppms]
    cands = candidates(args.round)
    results = {}  # (q, idx or None) -> {clip: bytes}

    def per_clip(sizes):
        out = {}
        for c, n in zip(clip_of, sizes):
            out[c] = out.get(c, 0) + n
        return out

    with cf.ThreadPoolExecutor(args.jobs) as ex:
        for q in quals:
            tq = os.path.join(tmp, f"q{q}.txt")
            open(tq, "w").write(psnr_section(q))
            base = ["cjpeg", "-qtables", tq, "-qslots", "0,1,1", "-sample", "2x2", "-optimize"]
            results[(q, None)] = per_clip(ex.map(size_of, [(base, p) for p in ppms]))
            for i, (lc, cc) in enumerate(cands):
                sp = os.path.join(tmp, f"s{i}.txt")
                open(sp, "w").write(script(lc, cc))
                results[(q, i)] = per_clip(ex.map(size_of, [(base + ["-scans", sp], p)
                                                            for p in ppms]))
            print(f"quality {q} done", file=sys.stderr)
    # Each clip counts equally: the mean over clips of the relative change, and the worst clip.
    rows = []
    head = ("| script (AC bands) | " + " | ".join(f"q {q} mean / worst clip" for q in quals) +
            " | mean | worst |")
    rows.append(head)
    rows.append("|---|" + "---:|" * (len(quals) + 2))
    rows.append("| sequential `-optimize`, bytes of all clips | " +
                " | ".join(str(sum(results[(q, None)].values())) for q in quals) + " | | |")
    scored = []
    for i, (lc, cc) in enumerate(cands):
        cells, means, worsts = [], [], []
        for q in quals:
            rel = {c: 100.0 * (results[(q, i)][c] / results[(q, None)][c] - 1) for c in clips}
            mean = sum(rel.values()) / len(rel)
            worst = max(rel, key=rel.get)
            cells.append(f"{mean:+.2f}% / {rel[worst]:+.2f}% {worst.split('-')[0]}")
            means.append(mean)
            worsts.append(rel[worst])
        scored.append((sum(means) / len(means), i, cells, max(worsts)))
    for mean, i, cells, worst in sorted(scored):
        rows.append(f"| {name(*cands[i])} | " + " | ".join(cells) +
                    f" | {mean:+.2f}% | {worst:+.2f}% |")
    table = "\n".join(rows)
    print(table)
    best = sorted(scored)[0]
    print("\nbest:\n" + script(*cands[best[1]]))
    if args.out:
        with open(args.out, "w") as f:
            f.write("# Progressive scan script search (generated by src/tools/search_scans.py)\n\n")
            f.write(f"Training frames ({args.frames} of 8 per clip, {len(ppms)} frames: "
                    + ", ".join(clips) + ") at their own sizes; `--tune psnr` tables of each "
                    "quality, `cjpeg -qtables T -qslots 0,1,1 -sample 2x2 -optimize [-scans S]`. "
                    "Size of each script relative to the sequential `-optimize` files of a clip "
                    "(negative: smaller), the mean over the clips and the worst clip. Every "
                    "script has a first DC scan of all components (interleaved) and no "
                    "successive approximation; chroma bands are the same for Cb and Cr.\n\n")
            f.write(f"Made by `python3 src/tools/search_scans.py --qualities {args.qualities} "
                    f"--frames {args.frames} --round {args.round} --out ...`.\n\n")
            f.write(table + "\n\nBest script:\n\n```\n" + script(*cands[best[1]]) + "```\n")


if __name__ == "__main__":
    main()
