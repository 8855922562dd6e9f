# Cases of everyday use (sourced by cli_test.sh): the progress line on a terminal, grey and
# alpha sources, and the wording of what mjpeg says.

# on_terminal COLS CMD...: runs CMD with stderr on a pseudo-terminal COLS columns wide (stdin
# and stdout not a terminal), writes what the terminal received to tty.txt; returns CMD's exit
# status.
on_terminal() {
  python3 - "$@" <<'EOF'
import fcntl, os, pty, struct, subprocess, sys, termios
cols, cmd = int(sys.argv[1]), sys.argv[2:]
master, slave = pty.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave,
                     env=env)
os.close(slave)
out = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:  # EIO: the last writer closed it
        break
    if not chunk:
        break
    out += chunk
open("tty.txt", "wb").write(out)
sys.exit(p.wait())
EOF
}

case_progress_line_fits_the_terminal() {
  make_y4m in.y4m 100 480x272  # long enough for a few updates, on one thread of each kind
  local cols
  for cols in 30 60 80; do
    on_terminal "$cols" "$MJPEG" encode in.y4m -o out.avi -y --mode cpu --producers 1 \
      --entropy-threads 1 || die "encode on a $cols-column terminal failed: $(cat tty.txt)"
    # Every piece of a line that a later "\r" overwrites is a progress update: each must fit in
    # COLS - 1 columns, or the terminal wraps it and the wrapped part stays on the screen.
    python3 - "$cols" <<'EOF' || die "progress line wider than the terminal: $(od -c tty.txt | head -20)"
import sys
cols = int(sys.argv[1])
text = open("tty.txt", "rb").read().decode().replace("\r\n", "\n")
updates = [piece for line in text.split("\n") for piece in line.split("\r")[:-1]]
shown = [u for u in updates if " frames" in u]
assert shown, "no progress update on the terminal: %r" % text
too_wide = [u for u in updates if len(u) > cols - 1]
assert not too_wide, "%d columns: %r" % (cols, too_wide)
assert "mjpeg: wrote out.avi: 100 frames" in text, text
print("%d columns: %d updates, the widest %d characters" % (cols, len(shown), max(map(len, updates))))
EOF
  done
}

case_no_gpu_note_where_there_is_no_nvidia_gpu() {
  # Without an NVIDIA driver (the machine has no NVIDIA GPU; /proc/driver/nvidia is the kernel
  # driver's own folder) the CPU is the only way to encode: no notice on every run, the summary
  # says "cpu mode", and `mjpeg info` says why. A named device still gets its notice.
  [[ -e /proc/driver/nvidia ]] && skip "this machine has an NVIDIA driver"
  make_y4m in.y4m 3 64x48
  expect_ok encode in.y4m -o out.avi
  ! grep -qi 'nvidia\|cuda\|encoding on the CPU' err.txt ||
    die "a GPU notice on a machine without an NVIDIA GPU: $(cat err.txt)"
  grep -q '^mjpeg: wrote out.avi: 3 frames, .* (cpu mode)' err.txt || die "summary: $(cat err.txt)"
  expect_ok info
  grep -q '^CUDA devices: none (.*); encoding runs on the CPU' out.txt || die "info: $(cat out.txt)"
  expect_ok encode in.y4m -o dev.avi --device 0
  grep -q '^mjpeg: note: CUDA device 0 does not exist .*encoding on the CPU' err.txt ||
    die "no notice for the named device: $(cat err.txt)"
}

