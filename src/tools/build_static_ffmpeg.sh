#!/usr/bin/env bash
# Builds FFmpeg's libraries (libavformat, libavcodec, libavutil, libswscale, libswresample) and
# dav1d (FFmpeg 5.1 decodes AV1 in software only through it) as static, position-independent
# archives from Debian's source packages, for the static build that runs on the GPU machine:
#
#   sudo src/tools/build_static_ffmpeg.sh [PREFIX]          (default PREFIX: /opt/mjpeg-ffmpeg)
#   cmake -S . -B build-static -DMJPEG_STATIC=ON -DMJPEG_FFMPEG_PREFIX=PREFIX ...
#
# With MJPEG_FFMPEG_PROGRAM=1 it also builds a static `ffmpeg` program into PREFIX/bin, a peer
# for measurements on the GPU machine (which has no FFmpeg): README's pipe `ffmpeg -i CLIP -f
# yuv4mpegpipe - | mjpeg encode - ...` from MP4/MKV/raw H.264 and HEVC. It is never linked.
#
# Configured minimally: the demuxers, parsers and decoders of the containers and codecs users
# have (MP4/MOV, MKV/WebM, AVI, MPEG-TS/PS, raw H.264/HEVC/MPEG streams, IVF; H.264, HEVC, VP9,
# AV1, MPEG-1/2, MPEG-4, MJPEG, ProRes, FFV1, raw video, and the common audio codecs), the
# bitstream filters that turn MP4/MKV packets into the Annex B streams NVDEC's parser reads, the
# Matroska and QuickTime muxers of the .mkv / .mov outputs (with the filter that turns ADTS AAC
# into theirs), and libswscale. No programs, devices, filters, network or autodetected system libraries (the
# archives must link into a binary with no shared FFmpeg, X11 or VA-API beside it). NVDEC is
# used by mjpeg through NVIDIA's cuvid API directly (headers of libffmpeg-nvenc-dev), so FFmpeg
# needs no hwaccel of its own.
#
# Needs root for apt-get (it adds a deb-src line beside the deb ones where none stands) and
# about 1 GB in WORK. Time on the 2-core development machine (-j2): see README, "Static build".
set -euo pipefail

PREFIX=${1:-/opt/mjpeg-ffmpeg}
WORK=${MJPEG_FFMPEG_WORK:-/tmp/mjpeg-ffmpeg-build}
JOBS=${JOBS:-$(nproc)}
started=$(date +%s)

say() { printf 'build_static_ffmpeg: %s\n' "$*"; }

# Source lines: Debian 12 writes deb822 files (debian.sources), older systems sources.list.
if ! grep -Eqs '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/*; then
  if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
    say "adding deb-src beside the deb lines of debian.sources"
    sed -e 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
      >/etc/apt/sources.list.d/mjpeg-deb-src.sources
  elif [[ -f /etc/apt/sources.list ]]; then
    say "adding deb-src beside the deb lines of sources.list"
    sed -n 's/^deb /deb-src /p' /etc/apt/sources.list >/etc/apt/sources.list.d/mjpeg-deb-src.list
  else
    echo "build_static_ffmpeg: error: no apt source lines to add deb-src to" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends dpkg-dev nasm meson ninja-build pkg-config \
  zlib1g-dev libffmpeg-nvenc-dev >/dev/null

mkdir -p "$WORK" "$PREFIX"
cd "$WORK"
for pkg in dav1d ffmpeg; do
  if ! compgen -G "$WORK/$pkg-[0-9]*/" >/dev/null; then
    say "apt-get source $pkg"
    apt-get source -qq "$pkg" >/dev/null
  fi
done
DAV1D_SRC=$(compgen -G "$WORK/dav1d-[0-9]*/" | head -n1)
FFMPEG_SRC=$(compgen -G "$WORK/ffmpeg-[0-9]*/" | head -n1)

say "dav1d from ${DAV1D_SRC}"
rm -rf "$WORK/dav1d-build"
meson setup "$WORK/dav1d-build" "$DAV1D_SRC" --prefix="$PREFIX" --libdir=lib \
  --buildtype=release --default-library=static -Db_staticpic=true \
  -Denable_tools=false -Denable_tests=false >/dev/null
ninja -C "$WORK/dav1d-build" -j"$JOBS" install >/dev/null

say "FFmpeg from ${FFMPEG_SRC}"
rm -rf "$WORK/ffmpeg-build"
mkdir -p "$WORK/ffmpeg-build"
cd "$WORK/ffmpeg-build"
demuxers=mov,matroska,avi,mpegts,mpegps,mpegvideo,h264,hevc,m4v,ivf,obu,mjpeg,rawvideo,wav,aac,mp3,flac,ogg
parsers=h264,hevc,vp9,av1,mpegvideo,mpeg4video,mjpeg,aac,aac_latm,ac3,flac,mpegaudio,opus,vorbis
decoders=h264,hevc,vp9,libdav1d,mpeg1video,mpeg2video,mpeg4,mjpeg,prores,ffv1,rawvideo
decoders+=,aac,aac_latm,ac3,eac3,mp2,mp3,flac,opus,vorbis,pcm_s16le,pcm_s16be,pcm_s24le,pcm_s32le,pcm_f32le
bsfs=h264_mp4toannexb,hevc_mp4toannexb,mpeg4_unpack_bframes,vp9_superframe_split,extract_extradata,null
bsfs+=,aac_adtstoasc  # AAC of a transport stream into Matroska / QuickTime
muxers=matroska,mov   # mjpeg encode -o x.mkv / x.mov
PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig" "$FFMPEG_SRC/configure" \
  --prefix="$PREFIX" --enable-static --disable-shared --enable-pic \
  --disable-programs --disable-doc --disable-network --disable-autodetect --disable-debug \
  --disable-everything --disable-avdevice --disable-avfilter --disable-postproc \
  --enable-avformat --enable-avcodec --enable-swscale --enable-swresample \
  --enable-zlib --enable-libdav1d --enable-x86asm \
  --enable-protocol=file,pipe \
  --enable-demuxer="$demuxers" --enable-parser="$parsers" --enable-decoder="$decoders" \
  --enable-bsf="$bsfs" --enable-muxer="$muxers" >"$WORK/ffmpeg-configure.log"
make -j"$JOBS" >/dev/null
make install >/dev/null

# Debian's zlib ships libz.a; the .pc files name -lz, which a static link then finds.
say "done in $(( $(date +%s) - started )) s: $PREFIX/lib/pkgconfig (libavformat.pc ...)"

if [[ ${MJPEG_FFMPEG_PROGRAM:-0} == 1 ]]; then
  # The program needs libavfilter and the filters its graph always inserts; a build of its own,
  # so that the libraries above stay as minimal as they are.
  say "the ffmpeg program"
  rm -rf "$WORK/ffmpeg-program"
  mkdir -p "$WORK/ffmpeg-program" "$PREFIX/bin"
  cd "$WORK/ffmpeg-program"
  "$FFMPEG_SRC/configure" --enable-static --disable-shared --disable-doc --disable-network \
    --disable-autodetect --disable-debug --disable-everything --disable-ffplay --disable-ffprobe \
    --enable-ffmpeg --disable-avdevice --disable-postproc --enable-avfilter --enable-swscale \
    --enable-swresample --enable-pthreads --enable-x86asm \
    --enable-protocol=file,pipe --enable-demuxer=mov,matroska,h264,hevc,yuv4mpegpipe \
    --enable-parser=h264,hevc --enable-decoder=h264,hevc,rawvideo \
    --enable-encoder=wrapped_avframe,rawvideo --enable-muxer=yuv4mpegpipe,null,rawvideo \
    --enable-filter=buffer,buffersink,format,null,scale,abuffer,abuffersink,anull,aformat,aresample \
    --enable-bsf=h264_mp4toannexb,hevc_mp4toannexb,null \
    --extra-ldflags=-static --pkg-config-flags=--static >"$WORK/ffmpeg-program-configure.log"
  make -j"$JOBS" ffmpeg >/dev/null
  strip -o "$PREFIX/bin/ffmpeg" ffmpeg
  say "done in $(( $(date +%s) - started )) s: $PREFIX/bin/ffmpeg"
fi
