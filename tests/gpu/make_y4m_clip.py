#!/usr/bin/env python3
"""Makes a panning Y4M clip (4:2:0, BT.601 limited range) from a binary PPM, for end-to-end
runs on machines without ffmpeg (the GPU machine): a WxH window moves across the picture.

    make_y4m_clip.py SOURCE.ppm OUT.y4m [--size 1920x1080] [--frames 300] [--step 4]
"""
import argparse

import numpy as np


def read_ppm(path):
    with open(path, "rb") as f:
        data = f.read()
    fields, pos = [], 0
    while len(fields) < 4:  # magic, width, height, maxval (no comments in our PPMs)
        while data[pos:pos + 1].isspace():
            pos += 1
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    if fields[0] != b"P6" or int(fields[3]) != 255:
        raise SystemExit(f"{path}: expected an 8-bit binary PPM")
    w, h = int(fields[1]), int(fields[2])
    return np.frombuffer(data, np.uint8, w * h * 3, pos + 1).reshape(h, w, 3)


def to_yuv420(rgb):
    r, g, b = (rgb[..., i].astype(np.float64) for i in range(3))
    y = 16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255
    cb = 128 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255
    cr = 128 + (112.0 * r - 93.786 * g - 18.214 * b) / 255
    sub = lambda p: (p[0::2, 0::2] + p[1::2, 0::2] + p[0::2, 1::2] + p[1::2, 1::2]) / 4
    q = lambda p: np.clip(np.rint(p), 0, 255).astype(np.uint8)
    return q(y), q(sub(cb)), q(sub(cr))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("source")
    ap.add_argument("out")
    ap.add_argument("--size", default="1920x1080")
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--step", type=int, default=4)
    a = ap.parse_args()
    w, h = map(int, a.size.split("x"))
    img = read_ppm(a.source)
    H, W, _ = img.shape
    if W < w or H < h:
        raise SystemExit(f"{a.source} ({W}x{H}) is smaller than {w}x{h}")
    # The whole picture converted once (even-sized): a window at even (x, y) is a slice of it,
    # the same bytes as converting the window (4:2:0 averages aligned 2x2 blocks).
    full = to_yuv420(img[:H - H % 2, :W - W % 2])
    with open(a.out, "wb") as f:
        f.write(f"YUV4MPEG2 W{w} H{h} F25:1 Ip A1:1 C420jpeg\n".encode())
        for i in range(a.frames):
            x = (i * a.step) % (W - w + 1)
            y = (i * a.step // 2) % (H - h + 1)
            if x % 2 == 0 and y % 2 == 0 and w % 2 == 0 and h % 2 == 0 and x + w <= W - W % 2 \
                    and y + h <= H - H % 2:
                planes = (full[0][y:y + h, x:x + w], full[1][y // 2:(y + h) // 2, x // 2:(x + w) // 2],
                          full[2][y // 2:(y + h) // 2, x // 2:(x + w) // 2])
            else:
                planes = to_yuv420(img[y:y + h, x:x + w])
            f.write(b"FRAME\n")
            for p in planes:
                f.write(np.ascontiguousarray(p).tobytes())


if __name__ == "__main__":
    main()
