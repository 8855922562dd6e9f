#!/usr/bin/env python3
"""Derives the quantization-table presets of `mjpeg --tune psnr|ssim` (docs/tuning/README.md).

Steps (each cached in --cache, so a rerun only redoes what changed):
  1. frames:  for every clip in --media, a few frames spread over the clip (training set) and a
              different spread (check set), cut by ffmpeg to rgb24 (.nut files in the cache);
  2. ffmpeg:  ffmpeg's own MJPEG encoder on the same frames (from the clip, as a user runs it)
              at -q:v 2..31, measured against the rgb24 frames with ffmpeg's psnr filter (rgb24,
              "average") and ssim filter (luma: the full-range BT.601 Y of those rgb24 frames);
  3. model:   mjpeg_qtune model: per-position Lagrangian choice of the tables (Y, Cb, Cr) over
              the training frames, for a grid of multipliers;
  3b. refine: (only with --refine, an attempt not used by the presets) at a few anchor
              multipliers, a search with the real encoder that moves each entry of the model's
              tables up or down (refine()), carried to the other multipliers (refinement());
  4. fit:     mjpeg_qtune eval: each candidate encoded (with --optimize) and measured; the
              preset's table for each quality 1..100 is the candidate whose measured quality
              is closest to what cjpeg's Annex K tables give at that quality on the training
              set (so `-q` keeps its meaning), among the candidates on the measured lower
              convex hull of bytes against quality;
  5. write:   src/core/quant_presets.inc (compiled in) and docs/tuning/{psnr,ssim}.txt (the
              same tables as cjpeg -qtables files, one per quality), docs/tuning/results.md.
  6. check:   per clip of --media, on the check frames: our curve (interpolated in log size)
              against ffmpeg's -q:v 2, 4, 8 points, PSNR and SSIM measured by ffmpeg's filters.

Only the Python standard library, ffmpeg/ffprobe and the mjpeg build are needed.
"""
import argparse
import hashlib
import json
import math
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def frame_count(clip):
    out = run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_packets",
               "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0", clip]).stdout
    return int(out.strip().split(",")[0])


def spread(n, k, phase):
    """k frame indices spread over 0..n-1, at (i + phase) * n / k."""
    return sorted({min(n - 1, int((i + phase) * n / k)) for i in range(k)})


def select_filter(indices):
    # setpts: the frames numbered 0, 1, ... at 25/s, so that the psnr/ssim filters (which pair
    # frames by time) pair them by index with a raw .mjpeg stream (read at 25/s).
    return "select='" + "+".join(f"eq(n\\,{i})" for i in indices) + "',settb=1/25,setpts=N"


def cut_frames(clip, indices, out):
    """The frames `indices` of `clip` as rgb24 (what mjpeg's reader makes of them)."""
    if os.path.exists(out):
        return
    tmp = out + ".tmp.nut"
    run(["ffmpeg", "-v", "error", "-y", "-i", clip, "-an", "-vf", select_filter(indices),
         "-fps_mode", "passthrough", "-pix_fmt", "rgb24", "-c:v", "rawvideo", tmp])
    os.replace(tmp, out)


def ffmpeg_encode(clip, indices, qv, out):
    if os.path.exists(out):
        return
    tmp = out + ".tmp.mjpeg"
    run(["ffmpeg", "-v", "error", "-y", "-i", clip, "-an", "-vf", select_filter(indices),
         "-fps_mode", "passthrough", "-c:v", "mjpeg", "-q:v", str(qv), "-f", "mjpeg", tmp])
    os.replace(tmp, out)


def ffmpeg_psnr_rgb(encoded, source):
    """ffmpeg's psnr filter on rgb24, the "average" (PSNR of the mean MSE); frames paired by
    index (both renumbered 0, 1, ... on one time base)."""
    err = subprocess.run(
        ["ffmpeg", "-nostats", "-i", encoded, "-i", source, "-lavfi",
         "[0:v]settb=1/25,setpts=N,format=rgb24[a];[1:v]settb=1/25,setpts=N,format=rgb24[b];"
         "[a][b]psnr", "-f", "null", "-"],
        capture_output=True, text=True).stderr
    m = re.findall(r"PSNR r:.* average:([0-9.inf]+)", err)
    if not m:
        raise RuntimeError(f"no PSNR for {encoded}: {err[-500:]}")
    return float(m[-1])


def ffmpeg_ssim_y(encoded, source):
    """ffmpeg's ssim filter on luma: both converted to rgb24, then to gray by swscale (the
    full-range BT.601 Y; within 1 of libjpeg's formula on 0.5% of pixels), mean over frames."""
    err = subprocess.run(
        ["ffmpeg", "-nostats", "-i", encoded, "-i", source, "-lavfi",
         "[0:v]settb=1/25,setpts=N,format=rgb24,format=gray[a];"
         "[1:v]settb=1/25,setpts=N,format=rgb24,format=gray[b];[a][b]ssim",
         "-f", "null", "-"], capture_output=True, text=True).stderr
    m = re.findall(r"SSIM Y:([0-9.]+)", err)
    if not m:
        raise RuntimeError(f"no SSIM for {encoded}: {err[-500:]}")
    return float(m[-1])


class Cache:
    def __init__(self, path):
        self.path = path
        os.makedirs(path, exist_ok=True)
        self.file = os.path.join(path, "results.json")
        self.data = json.load(open(self.file)) if os.path.exists(self.file) else {}

    def get(self, key):
        return self.data.get(key)

    def put(self, key, value):
        self.data[key] = value
        tmp = self.file + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.data, f)
        os.replace(tmp, self.file)


def clips_of(media):
    if not media:
        sys.exit("tune_tables.py: name the media folder with --media DIR (or MJPEG_MEDIA_DIR)")
    video = os.path.join(media, "video")
    return sorted(os.path.join(video, f) for f in os.listdir(video)
                  if f.rsplit(".", 1)[-1] in ("mp4", "webm", "mkv", "mov", "avi"))


def prepare(args, cache):
    """Training and check frames of every clip; returns {clip name: {train, check, ...}}."""
    sets = {}
    for clip in clips_of(args.media):
        name = os.path.splitext(os.path.basename(clip))[0]
        key = f"count:{name}"
        n = cache.get(key)
        if n is None:
            n = frame_count(clip)
            cache.put(key, n)
        train = spread(n, args.train_frames, 0.5)
        check = spread(n, args.check_frames, 0.25)
        entry = {"clip": clip, "frames": n, "train_idx": train, "check_idx": check}
        for part, idx in (("train", train), ("check", check)):
            path = os.path.join(cache.path, f"{name}.{part}.nut")
            cut_frames(clip, idx, path)
            entry[part] = path
        sets[name] = entry
        log(f"{name}: {n} frames, train {train}, check {check}")
    return sets


def ffmpeg_points(sets, part, qvs, cache):
    """{clip: {qv: (bytes, psnr, ssim)}} for ffmpeg's MJPEG encoder on `part` frames."""
    out = {}
    for name, e in sets.items():
        out[name] = {}
        for qv in qvs:
            key = f"ffmpeg:{name}:{part}:{qv}:{e[part + '_idx']}"
            v = cache.get(key)
            if v is None:
                enc = os.path.join(cache.path, f"{name}.{part}.ffq{qv}.mjpeg")
                ffmpeg_encode(e["clip"], e[part + "_idx"], qv, enc)
                v = [os.path.getsize(enc), ffmpeg_psnr_rgb(enc, e[part]),
                     ffmpeg_ssim_y(enc, e[part])]
                cache.put(key, v)
                os.remove(enc)
            out[name][qv] = tuple(v)
    return out



# The presets: what mjpeg_qtune model is asked for, and which measured figure ties a preset's
# tables at quality Q to cjpeg's Annex K tables at Q. See docs/tuning/README.md for why.
PRESETS = {
    # --chroma-weight 0.8: the chroma weight of RGB PSNR times 0.8, chosen on the training
    # frames (the summed margin over ffmpeg's -q:v 2 / 4 / 8 points: 2.57 dB at 1.0, 2.99 at 0.7,
    # 3.01 at 0.8, 2.75 at 0.9; docs/tuning/README.md).
    "psnr": {"metric": "psnr", "figure": 1,
             "args": ["--metric", "psnr", "--shared-chroma", "--chroma-weight", "0.8"],
             "lambdas": (0.05, 2000)},
    "ssim": {"metric": "ssim", "figure": 2,
             "args": ["--metric", "ssim", "--gamma", "0.5", "--chroma-weight", "0.3",
                      "--shared-chroma"],
             "lambdas": (0.002, 2000)},
    # The PSNR preset of the rdo modes (--tune psnr with --rdo deadzone|trellis; --tune ssim
    # with the trellis keeps the "psnr" tables): the model rounds AC levels with --rdo
    # deadzone's offset of 3/8, and each candidate is measured with that rounding. Fitted to the
    # quality scale like the others (the PSNR of cjpeg's tables at Q, rounded to nearest).
    # docs/rdo.md: 0.1-2.4% smaller than the "psnr" tables with the trellis at equal PSNR.
    "psnr_rdo": {"metric": "psnr", "figure": 1,
                 "args": ["--metric", "psnr", "--shared-chroma", "--chroma-weight", "0.8",
                          "--ac-rounding", "3"],
                 "lambdas": (0.05, 2000), "rdo": "deadzone"},
}


def fitted_at(sub, chroma_weight):
    """The two PSNR presets ("psnr", "psnr_rdo") fitted again at the sampling `sub` ("444",
    "422"): the model's statistics, the candidates' measurement and the cjpeg tables the quality
    scale is tied to, all at that sampling, where a chroma sample covers one or two pixels, not
    four, so its error weighs less than at 4:2:0 in the model's RGB PSNR. mjpeg takes them at
    -s 444 / -s 422 (docs/tuning/README.md, "4:4:4")."""
    args = ["--metric", "psnr", "--shared-chroma", "--chroma-weight", chroma_weight,
            "--subsampling", sub]
    common = {"metric": "psnr", "figure": 1, "subsampling": sub, "lambdas": (0.05, 2000)}
    return {f"psnr_{sub}": dict(common, args=args),
            f"psnr_rdo_{sub}": dict(common, args=args + ["--ac-rounding", "3"], rdo="deadzone")}


# Chroma weight 1.2 at 4:4:4 of 0.5 / 0.8 / 1.2 / 1.6, and 1.0 at 4:2:2 of 1.0 / 1.3, each
# measured with the trellis on three clips against FFmpeg (docs/tuning/README.md: at 4:4:4 1.2
# and 1.6 alike, lower weights lose at -q:v 8; at 4:2:2 alike, 0.3-0.6% smaller on average than
# the 4:2:0 tables).
PRESETS.update(fitted_at("444", "1.2"))
PRESETS.update(fitted_at("422", "1.0"))

GRID = 48  # multipliers per preset, log-spaced


def tool(args):
    return os.path.join(args.build, "mjpeg_qtune")


def model(args, preset, lambdas, inputs):
    out = run([tool(args), "model", "--lambdas", ",".join(f"{x:.6g}" for x in lambdas)]
              + PRESETS[preset]["args"] + inputs).stdout
    return [json.loads(line) for line in out.splitlines()]


def evaluate(args, cache, jobs, inputs, tag):
    """{job id: {clip: (bytes, psnr, ssim)}} measured by mjpeg_qtune eval (cached)."""
    key = "eval:" + hashlib.sha1(json.dumps([jobs, inputs]).encode()).hexdigest()
    v = cache.get(key)
    if v is None:
        path = os.path.join(cache.path, f"jobs-{tag}.json")
        with open(path, "w") as f:
            json.dump(jobs, f)
        out = run([tool(args), "eval", path] + inputs).stdout
        v = {}
        for line in out.splitlines():
            d = json.loads(line)
            clip = os.path.basename(d["input"]).split(".")[0]
            v.setdefault(str(d["id"]), {})[clip] = [d["bytes"], d["psnr_rgb"], d["ssim_y"]]
        cache.put(key, v)
    return v


def aggregate(res_id, figure):
    """One figure over all training clips: PSNR of the mean MSE (clips weighted equally), or
    the mean SSIM."""
    vals = [v[figure] for v in res_id.values()]
    if figure == 1:
        return 10 * math.log10(255 * 255 / (sum(255 * 255 / 10 ** (p / 10) for p in vals)
                                               / len(vals)))
    return sum(vals) / len(vals)


def relative_costs(res, base, mu):
    """Per clip: MSE / base MSE + mu[clip] * bytes / base bytes. mu[clip] is the local slope of
    relative MSE against relative bytes of that clip's candidate curve, so a lower cost is,
    to first order, a higher PSNR at the same size."""
    mse = lambda p: 10 ** (-p / 10)
    return {c: mse(res[c][1]) / mse(base[c][1]) + mu[c] * res[c][0] / base[c][0] for c in base}


def pareto_gain(res, base, mu):
    """The summed cost reduction of `res` against `base`, or None when any clip's cost rises
    (a table that trades one clip's PSNR for another's is not taken: the targets are per clip)."""
    new, old = relative_costs(res, base, mu), relative_costs(base, base, mu)
    if any(new[c] > old[c] for c in base):
        return None
    return sum(old[c] - new[c] for c in base)


def moved(v, up):
    """One step of the search: about 12% up or down, at least 1, within 1..255."""
    n = max(1, round(v * 1.12 if up else v / 1.12))
    if n == v:
        n = v + (1 if up else -1)
    return min(255, max(1, n))


def refine(args, cache, inputs, base, mu, tag, rounds=2):
    """A search with the real encoder around one candidate `base` ([luma, chroma]): in each
    round every entry of both tables is moved up and down by a step (256 encodes of the training
    set); the moves that lower the cost of every clip (pareto_gain) are taken together, the
    best first and one per entry; if the combination does not lower every clip's cost, only
    the best move."""
    cur = [list(base[0]), list(base[1])]
    ref = evaluate(args, cache, [{"id": "b", "quality": 50, "optimize": True, "qtables": cur}],
                   inputs, tag)["b"]
    for r in range(rounds):
        moves, jobs = [], []
        for s in (0, 1):
            for n in range(64):
                for up in (True, False):
                    v = moved(cur[s][n], up)
                    if v == cur[s][n]:
                        continue
                    t = [list(cur[0]), list(cur[1])]
                    t[s][n] = v
                    moves.append((s, n, v))
                    jobs.append({"id": f"m{len(jobs)}", "quality": 50, "optimize": True,
                                 "qtables": t})
        res = evaluate(args, cache, jobs, inputs, tag)
        gains = sorted(((g, m, j["id"]) for j, m in zip(jobs, moves)
                        for g in [pareto_gain(res[j["id"]], ref, mu)] if g is not None and g > 0),
                       reverse=True)
        if not gains:
            break
        combined = [list(cur[0]), list(cur[1])]
        taken = set()
        for g, (s, n, v), _ in gains:
            if (s, n) not in taken:
                taken.add((s, n))
                combined[s][n] = v
        got = evaluate(args, cache, [{"id": "c", "quality": 50, "optimize": True,
                                      "qtables": combined}], inputs, tag)["c"]
        g = pareto_gain(got, ref, mu)
        if g is None or g < gains[0][0]:
            s, n, v = gains[0][1]
            combined = [list(cur[0]), list(cur[1])]
            combined[s][n] = v
            got, g = res[gains[0][2]], gains[0][0]
            taken = {(s, n)}
        log(f"  refine {tag} round {r}: {len(gains)} moves better for every clip, "
            f"{len(taken)} taken, summed cost -{g:.4f}")
        cur, ref = combined, got
    return cur


def refinement(args, cache, inputs, preset, grid, cands, res):
    """The search at the anchor multipliers of the preset, and a function adjust(tables, L)
    carrying its result to any multiplier L: each AC entry multiplied by the factor (refined /
    model table) interpolated in log(L) between the anchors, fading to 1 over a decade beyond
    the first and last anchor; each DC entry (the model's worst guess: its choice jumps between
    neighbouring multipliers) replaced by the refined anchors' DC values themselves,
    interpolated in log between them (towards the model's own beyond the outer anchors)."""
    anchors = PRESETS[preset].get("refine")
    if not anchors:
        return lambda tables, lam: tables
    fig = 1
    points = []
    for a in anchors:
        k = min(range(1, len(grid) - 1), key=lambda i: abs(math.log(grid[i] / a)))
        lo, mid, hi = res[f"L{k - 1}"], res[f"L{k}"], res[f"L{k + 1}"]
        mse = lambda p: 10 ** (-p / 10)
        mu = {c: -((mse(lo[c][fig]) - mse(hi[c][fig])) / mse(mid[c][fig]))
              / ((lo[c][0] - hi[c][0]) / mid[c][0]) for c in mid}
        base = cands[k]["tables"][:2]
        best = refine(args, cache, inputs, base, mu, f"{preset}-refine-{k}")
        points.append((math.log(grid[k]),
                       [[b / a0 for a0, b in zip(base[s], best[s])] for s in (0, 1)],
                       [best[0][0], best[1][0]]))
        log(f"{preset}: refined the candidate at multiplier {grid[k]:.4g} (slopes "
            + ", ".join(f"{v:.2f}" for v in mu.values()) + ")")
    one = [[1.0] * 64, [1.0] * 64]
    points = ([(points[0][0] - math.log(10), one, None)] + points
              + [(points[-1][0] + math.log(10), one, None)])

    def adjust(tables, lam):
        x = math.log(lam)
        if x <= points[0][0] or x >= points[-1][0]:
            return tables
        for (x0, f0, d0), (x1, f1, d1) in zip(points, points[1:]):
            if x0 <= x <= x1:
                t = (x - x0) / (x1 - x0)
                out = [[min(255, max(1, round(v * (a + t * (b - a)))))
                        for v, a, b in zip(tables[s], f0[s], f1[s])] for s in (0, 1)]
                for s in (0, 1):
                    a = d0[s] if d0 else tables[s][0]
                    b = d1[s] if d1 else tables[s][0]
                    out[s][0] = max(1, round(a * (b / a) ** t))
                return out
        return tables
    return adjust


def fit_preset(args, cache, sets, preset, annexk):
    """The preset's tables for qualities 1..100 (list of [luma, chroma])."""
    p = PRESETS[preset]
    inputs = [e["train"] for e in sets.values()]
    lo, hi = p["lambdas"]
    grid = [lo * (hi / lo) ** (i / (GRID - 1)) for i in range(GRID)]
    cands = model(args, preset, grid, inputs)
    extra = {k: p[k] for k in ("rdo", "subsampling") if k in p}
    jobs = [dict({"id": f"L{i}", "quality": 50, "optimize": True, "qtables": c["tables"][:2]},
                 **extra) for i, c in enumerate(cands)]
    res = evaluate(args, cache, jobs, inputs, preset)
    adjust = refinement(args, cache, inputs, preset, grid, cands, res)
    if p.get("refine"):
        # The candidates again, each adjusted at its multiplier, measured.
        jobs = [dict({"id": f"L{i}", "quality": 50, "optimize": True,
                      "qtables": adjust(c["tables"][:2], grid[i])}, **extra)
                for i, c in enumerate(cands)]
        res = evaluate(args, cache, jobs, inputs, preset + "-refined")
    fig = p["figure"]
    curve = [(math.log(grid[i]), aggregate(res[f"L{i}"], fig)) for i in range(GRID)]
    # The figure falls as the multiplier grows; interpolate log(multiplier) at each target.
    chosen = []
    annexk = annexk[p.get("subsampling", "420")]
    for q in range(1, 101):
        target = aggregate(annexk[str(q)], fig)
        x = curve[0][0] if target >= curve[0][1] else curve[-1][0]
        for (x0, y0), (x1, y1) in zip(curve, curve[1:]):
            if y0 >= target >= y1 and y0 != y1:
                x = x0 + (x1 - x0) * (y0 - target) / (y0 - y1)
                break
        chosen.append(math.exp(x))
    tables = [adjust(m["tables"][:2], lam)
              for m, lam in zip(model(args, preset, chosen, inputs), chosen)]
    # A lower quality is never finer anywhere: from quality 100 down, each entry at least the
    # one of the quality above (the per-position choices can otherwise waver by a step).
    for q in range(98, -1, -1):
        tables[q] = [[max(a, b) for a, b in zip(tables[q][s], tables[q + 1][s])] for s in (0, 1)]
    return tables, chosen, curve


def write_outputs(presets):
    """docs/tuning/<preset>.txt (cjpeg -qtables files, one section per quality) and
    src/core/quant_presets.inc (the same numbers, compiled in)."""
    inc = ["// Generated by src/tools/tune_tables.py from the training set described in",
           "// docs/tuning/README.md; the same tables as docs/tuning/psnr.txt, ssim.txt,",
           "// psnr_rdo.txt and the psnr*_444.txt, psnr*_422.txt files. Do not edit: rerun the",
           "// script.", ""]
    for name, tables in presets.items():
        sub = PRESETS[name].get("subsampling")
        at = f" at -s {sub}" if sub else ""
        sample = {"444": "1x1", "422": "2x1"}.get(sub, "2x2")
        if PRESETS[name].get("rdo"):
            lines = [f"# mjpeg --tune psnr with --rdo deadzone or trellis{at}: quantization tables",
                     "# for each quality, generated by",
                     "# src/tools/tune_tables.py (docs/tuning/README.md). The section of quality Q",
                     "# is a cjpeg -qtables file: the DQT those modes write at -q Q (their levels",
                     "# are not cjpeg's rounding, so the bytes are not cjpeg's).", ""]
        else:
            tune = name.split("_")[0]
            lines = [f"# mjpeg --tune {tune}{at}: quantization tables for each quality, generated by",
                     "# src/tools/tune_tables.py (docs/tuning/README.md). The section of quality Q is a",
                     f"# cjpeg -qtables file: `mjpeg --tune {tune} -q Q{at}` writes the bytes of",
                     f"# `cjpeg -qtables <that section> -qslots 0,1,1 -sample {sample}` (no -quality:",
                     "# used as they are).", ""]
        inc.append(f"constexpr std::uint8_t kPreset_{name}[100][2][64] = {{")
        for q, (luma, chroma) in enumerate(tables, start=1):
            lines.append(f"# quality {q}")
            for label, t in (("luma (slot 0)", luma), ("chroma (slot 1)", chroma)):
                lines.append(f"# {label}")
                for r in range(8):
                    lines.append(" ".join(f"{v:3d}" for v in t[r * 8:r * 8 + 8]))
            lines.append("")
            inc.append(f"    {{{{{', '.join(map(str, luma))}}},")
            inc.append(f"     {{{', '.join(map(str, chroma))}}}}},  // quality {q}")
        inc.append("};")
        inc.append("")
        with open(os.path.join(ROOT, "docs", "tuning", f"{name}.txt"), "w") as f:
            f.write("\n".join(lines))
    with open(os.path.join(ROOT, "src", "core", "quant_presets.inc"), "w") as f:
        f.write("\n".join(inc))


def interp_log(points, size, figure):
    """points: [(bytes, psnr, ssim)], figure at `size` interpolated in log size (None outside)."""
    pts = sorted(points)
    for a, b in zip(pts, pts[1:]):
        if a[0] <= size <= b[0] and a[0] != b[0]:
            t = (math.log(size) - math.log(a[0])) / (math.log(b[0]) - math.log(a[0]))
            return a[figure] + t * (b[figure] - a[figure])
    return None


def check(args, cache, sets):
    """Our presets against ffmpeg's -q:v 2, 4, 8 on the check frames of every clip, measured by
    ffmpeg's filters; returns the rows of docs/tuning/results.md."""
    ff = ffmpeg_points(sets, "check", [2, 4, 8], cache)
    inputs = [e["check"] for e in sets.values()]
    # The measurements depend on the tables compiled in: their digest is part of every key.
    with open(os.path.join(ROOT, "src", "core", "quant_presets.inc"), "rb") as f:
        built = hashlib.sha1(f.read()).hexdigest()[:12]
    rows = []
    runs = [("none", 1), ("psnr", 1), ("none", 2), ("ssim", 2)]
    if args.progressive:
        runs += [("psnr+progressive", 1), ("ssim+progressive", 2)]
    for variant, fig in runs:
        preset, _, coding = variant.partition("+")
        prog = coding == "progressive"
        job_extra = {"progressive": True} if prog else {}
        ours = evaluate(args, cache, [dict({"id": q, "quality": q, "optimize": True,
                                            "tune": preset, "presets": built}, **job_extra)
                                      for q in range(1, 101)],
                        inputs, "check-" + preset + ("-progressive" if prog else ""))
        for name, e in sets.items():
            for qv in (2, 4, 8):
                size = ff[name][qv][0]
                curve = sorted((ours[str(q)][name][0], q) for q in range(1, 101))
                below = max((c for c in curve if c[0] <= size), default=None)
                above = min((c for c in curve if c[0] >= size), default=None)
                if below is None or above is None:
                    rows.append((variant, fig, name, qv, size, ff[name][qv][fig], None, None))
                    continue
                pts = []
                for b, q in {below, above}:
                    key = f"mjpeg:{name}:check:{preset}:{q}:{e['check_idx']}:{built}"
                    if prog:
                        key += ":progressive"
                    v = cache.get(key)
                    if v is None:
                        enc = os.path.join(cache.path, f"{name}.check.{preset}{q}.mjpeg")
                        run([os.path.join(args.build, "mjpeg"), "encode", e["check"], "-o", enc,
                             "-y", "--quiet", "--mode", "cpu", "--optimize", "-q", str(q),
                             "--tune", preset] + (["--progressive"] if prog else []))
                        v = [os.path.getsize(enc), ffmpeg_psnr_rgb(enc, e["check"]),
                             ffmpeg_ssim_y(enc, e["check"])]
                        cache.put(key, v)
                        os.remove(enc)
                    pts.append(tuple(v))
                value = pts[0][fig] if len(pts) == 1 else interp_log(pts, size, fig)
                qs = sorted({below[1], above[1]})
                rows.append((variant, fig, name, qv, size, ff[name][qv][fig], value, qs))
                log(variant, "PSNR" if fig == 1 else "SSIM", name, f"q:v {qv}", size,
                    ff[name][qv][fig], value)
    return rows


def write_results(rows, sets):
    out = ["# Tuned tables against ffmpeg's MJPEG encoder (generated by src/tools/tune_tables.py)",
           "",
           "Check frames (not the training frames) of every clip of the media set, 4:2:0,",
           "`--optimize` (and, in the `--progressive` sections, `--optimize --progressive`).",
           "ffmpeg: `-c:v mjpeg -q:v N` from the clip itself. Both measured by",
           "ffmpeg's filters against the rgb24 frames (frames paired by index): `psnr` on rgb24",
           "(average), `ssim` on luma (rgb24 to gray). Ours: the figure of our curve (the",
           "qualities around ffmpeg's size) interpolated in log size at ffmpeg's byte count.",
           "",
           "Made by `cmake --build build --target mjpeg mjpeg_qtune && python3 "
           "src/tools/tune_tables.py --check" + (" --progressive" if any(
               r[0].endswith("+progressive") for r in rows) else "") + "`",
           "(docs/tuning/README.md: how the tables were derived, and why ffmpeg keeps a lead on",
           "some clips).",
           "",
           "Clips and check frames:", ""]
    for name, e in sets.items():
        out.append(f"- {name}: {e['frames']} frames; check frames {e['check_idx']}")
    sections = [("psnr", 1), ("none", 1), ("ssim", 2), ("none", 2)]
    if any(r[0].endswith("+progressive") for r in rows):
        sections[1:1] = [("psnr+progressive", 1)]
        sections.append(("ssim+progressive", 2))
    for preset, fig in sections:
        label = "PSNR (dB)" if fig == 1 else "SSIM"
        title = (f"`--tune {preset.split('+')[0]} --progressive`" if preset.endswith("+progressive")
                 else f"`--tune {preset}`")
        out += ["", f"## {label}: {title}" if preset != "none"
                else f"## {label}: default tables (Annex K, cjpeg's), for reference", "",
                "| clip | ffmpeg | bytes | ffmpeg's | ours | ours - ffmpeg | our qualities |",
                "|---|---|---:|---:|---:|---:|---|"]
        for r in rows:
            if r[0] != preset or r[1] != fig:
                continue
            _, _, name, qv, size, theirs, ours, qs = r
            fmt = "{:.3f}" if fig == 1 else "{:.5f}"
            diff = "n/a" if ours is None else fmt.format(ours - theirs)
            out.append(f"| {name} | -q:v {qv} | {size} | {fmt.format(theirs)} | "
                       f"{'outside our curve' if ours is None else fmt.format(ours)} | {diff} | "
                       f"{qs if qs else ''} |")
    with open(os.path.join(ROOT, "docs", "tuning", "results.md"), "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--media", default=os.environ.get("MJPEG_MEDIA_DIR"),
                    help="the media folder, whose video/ clips are used (default: the "
                         "environment's MJPEG_MEDIA_DIR)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--cache", default=os.path.join(ROOT, "build", "tuning"))
    ap.add_argument("--train-frames", type=int, default=8)
    ap.add_argument("--check-frames", type=int, default=10)
    ap.add_argument("--refine", default="",
                    help="comma-separated anchor multipliers for the real-encoder search of the "
                         "PSNR preset (an attempt, off by default: docs/tuning/README.md)")
    ap.add_argument("--write", action="store_true",
                    help="write docs/tuning/*.txt and src/core/quant_presets.inc")
    ap.add_argument("--check", action="store_true",
                    help="measure the built presets against ffmpeg (docs/tuning/results.md)")
    ap.add_argument("--progressive", action="store_true",
                    help="with --check: also measure each preset with --progressive (its own "
                         "sections of results.md)")
    args = ap.parse_args()
    if args.refine:
        PRESETS["psnr"]["refine"] = tuple(float(x) for x in args.refine.split(","))
    cache = Cache(args.cache)
    sets = prepare(args, cache)
    for part in ("train", "check"):
        ff = ffmpeg_points(sets, part, [2, 4, 8], cache)
        for name, pts in ff.items():
            log(part, name, pts)
    train = [e["train"] for e in sets.values()]
    # cjpeg's (Annex K) tables at each quality, at each sampling a preset is fitted at.
    annexk = {"420": evaluate(args, cache, [{"id": q, "quality": q, "optimize": True}
                                            for q in range(1, 101)], train, "annexk")}
    for sub in sorted({p["subsampling"] for p in PRESETS.values() if "subsampling" in p}):
        annexk[sub] = evaluate(args, cache, [{"id": q, "quality": q, "optimize": True,
                                              "subsampling": sub} for q in range(1, 101)],
                               train, "annexk" + sub)
    presets = {}
    for name in PRESETS:
        tables, chosen, curve = fit_preset(args, cache, sets, name, annexk)
        presets[name] = tables
        log(name, "multipliers at q 10, 50, 75, 90, 100:",
            [round(chosen[q - 1], 4) for q in (10, 50, 75, 90, 100)])
    if args.write:
        write_outputs(presets)
        log("wrote docs/tuning/*.txt and src/core/quant_presets.inc")
    if args.check:
        # Needs the build to have the tables just written (rebuild mjpeg and mjpeg_qtune first).
        write_results(check(args, cache, sets), sets)
        log("wrote docs/tuning/results.md")


if __name__ == "__main__":
    main()
