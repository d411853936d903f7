#!/usr/bin/env bash
# Builds voxd's whisper.cpp addon (native/build/voxd_whisper.node) and whisper.cpp's quantize tool
# (native/build/whisper-quantize) from the whisper.cpp source tree that an npm package ships. Nothing of whisper.cpp is
# kept in this repository.
#
# Source: nodejs-whisper@0.3.1 ships the complete whisper.cpp 1.9.1 tree (ggml core, cmake modules). The newer
# @fugood/whisper.node@1.1.3 ships whisper.cpp 1.9.3 without ggml's core sources (ggml.c, ggml-backend.cpp, gguf.cpp)
# or cmake modules, so it cannot be built on its own.
#
# Two stages, each skipped when up to date:
#   1. whisper.cpp's static libraries (Release, GGML_NATIVE, OpenBLAS for the encoder's large matrix products,
#      llamafile's tiled matrix kernels (sgemm) for the decoder's batched products, -fPIC) and whisper-quantize, built in
#      the cache once per
#      source version and shared by every checkout;
#   2. our addon (native/whisper-addon), linked against those libraries, built inside this checkout.
# Ten patches are applied to the source, in this order: whisper-dtw-short-window.patch (DTW word timing aborted the whole
# process when a decoded window ended within its first 7 frames, a GGML assert in the median filter, which any short or
# odd input can trigger), whisper-temperature.patch (reports the temperature of the accepted decoding, which
# whisper.cpp keeps to itself: transcripts show it and a chunk decoded only after fallback is not used as the next prompt)
# and whisper-encoder-flash-attention.patch (the encoder's self-attention runs as flash attention while the decoder keeps
# the plain path that DTW word timing reads: the same tokens and DTW times on a 25 s window and the same transcripts of
# the 19 eval clips; a 30 s window encodes in about 1.9 s instead of 2.2 s on one thread here) and
# whisper-asked-logits.patch (only the rows whose logits a batch asks for go through the vocabulary projection, the
# prompt's last and its start-of-transcript token's, the DTW pass's last, instead of every token's; and the no-speech
# probability is read at the start-of-transcript token, as in OpenAI's Whisper: upstream read a row it never copied out,
# so it always came out as 1 / n_vocab), whisper-reusable-state.patch (a state the
# addon keeps for the next call decodes exactly as a fresh one: the first decoder's sampling generator restarts on every
# call, as the others do, and language detection runs on the full window with an empty self-attention cache) and whisper-sampled-loop.patch (a sampled decoding, temperature above 0, that says a run
# of 2-16 tokens four times in a row fails at once instead of looping on to the token limit and failing the entropy test
# there: the fallback of a 1 s clip cost 1.5 s of CPU, nearly all of it samples repeating "She had a daughter.") and
# whisper-encoder-input.patch (a state may hand every window's mel to an encoder outside whisper.cpp, the addon's call
# into onnxruntime, and take its output in place of the conv and encoder graphs: the same encoder as an ONNX graph costs
# about 1.1 s of CPU per 30 s window instead of 1.7-1.9 s here; and a state gives its last encoder output, to check such
# an encoder against whisper.cpp's own) and ggml-amx-f16-only.patch (GGML_NATIVE compiles ggml's AMX code in where the
# CPU lists AMX; its kernels for quantised weights use the AMX tiles, which a virtual machine may list without granting:
# whisper-base-q8_0 died at its first matrix product, an illegal instruction. Only f16 weights, whose kernels there are
# AVX-512, now go to that code: without it the f16 model took about 7% more CPU) and whisper-int8-projection.patch (where
# the CPU has AVX512-VNNI, the vocabulary projection of each decoding step, 51,865 rows times up to 5 beams, runs on an
# int8 copy of the token embedding made at load, one scale per row, with the step's activations in two int8 parts, value
# and rounding error: 8% less CPU on the 10-minute side-by-side file. Activations in one int8 part, as in CTranslate2's
# int8 models, lost words in German, Korean and Chinese. The rows that decide the step, each beam's 64 best text tokens
# and every special and timestamp token, are then scored again from the f16 weights: with int8 scores alone a near tie
# went the other way ("ask not" heard as "asked not!", a long-file test failing on a CPU without AMX), and the 19 eval
# clips came out differently from the f16 product; now they come out word for word the same, at the same CPU on the 67 s
# file (9.2 s). It keeps the int8 copy beside the f16 weights: about 27 MB more) and whisper-end-of-audio-margin.patch
# (a caller may end a decoding pass at its first timestamp closer to the end of the audio than whisper.cpp's 100 ms:
# live transcription's decodings stop at 0.3 s, where a segment would start with no speech left; one Japanese turn of
# the realtime bench said its sentence five times over there, 0.84 s of decoding instead of 0.41).
# Env: VOXD_CACHE_DIR (default ~/.cache/voxd), VOXD_BUILD_JOBS (default 2), NODE_INCLUDE_DIR (default: the running
# Node's include/node).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
package="nodejs-whisper@0.3.1"
package_sha256="92041caf2b26c74b7f489fedf37bd093f216eebd61df512045ec2d19d0531d37"
whisper_version="1.9.1"
jobs="${VOXD_BUILD_JOBS:-2}"
cache="${VOXD_CACHE_DIR:-$HOME/.cache/voxd}/build/whisper"
tarball="$cache/nodejs-whisper-0.3.1.tgz"
source_dir="$cache/src/package/cpp/whisper.cpp"
patch_files=("$here/whisper-dtw-short-window.patch" "$here/whisper-temperature.patch" "$here/whisper-encoder-flash-attention.patch" "$here/whisper-asked-logits.patch" "$here/whisper-reusable-state.patch" "$here/whisper-sampled-loop.patch" "$here/whisper-encoder-input.patch" "$here/ggml-amx-f16-only.patch" "$here/whisper-int8-projection.patch" "$here/whisper-end-of-audio-margin.patch" "$here/whisper-detection-audio-ctx.patch")
patch_id="$(cat "${patch_files[@]}" | sha256sum | cut -c1-12)"
# The directory name carries the build flavour and the patch: a cache from an older one is not reused.
lib_build="$cache/lib-$whisper_version-openblas-openmp-llamafile-$patch_id"
# OpenBLAS's OpenMP build (Debian's libopenblas-openmp-dev), never its pthreads build, which the system default may be.
# The pthreads build registers a fork handler that shuts its thread pool down: a fork (libuv spawning ffmpeg) while a
# transcription runs BLAS on another thread joined a busy pool and hung the whole process, or left the transcription
# spinning in exec_blas_async_wait. The OpenMP build registers no fork handler and shares ggml's OpenMP runtime (ggml
# itself warns when the two differ). The addon links this library by path and finds it through its RPATH.
multiarch="$(gcc -print-multiarch)"
openblas_library="/usr/lib/$multiarch/openblas-openmp/libopenblas.so"
openblas_include="/usr/include/$multiarch/openblas-openmp"
[ -f "$openblas_library" ] || { echo "$openblas_library not found: install libopenblas-openmp-dev" >&2; exit 1; }
out="$here/build"
addon="$out/voxd_whisper.node"
quantize="$out/whisper-quantize"

newer_than_sources() {
  [ -f "$1" ] || return 1
  local source
  for source in "$here/whisper-addon"/* "$0" "${patch_files[@]}"; do [ "$1" -nt "$source" ] || return 1; done
}
if newer_than_sources "$addon" && [ -x "$quantize" ]; then exit 0; fi

mkdir -p "$cache" "$out"
# One build at a time per cache (several checkouts may share it).
exec 9>"$cache/.lock"
flock 9

# Compiler output goes to a log, shown only on failure.
log="$cache/build.log"
: >"$log"
step() {
  if ! "$@" >>"$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "whisper.cpp build failed at: $* (full log: $log)" >&2
    exit 1
  fi
}

if [ ! -f "$lib_build/.done" ]; then
  if [ ! -f "$tarball" ]; then
    (cd "$cache" && npm pack "$package" --silent >/dev/null)
  fi
  echo "$package_sha256  $tarball" | sha256sum --check --quiet
  if [ ! -f "$source_dir/.voxd-patch-$patch_id" ]; then
    rm -rf "$cache/src" && mkdir -p "$cache/src" && tar xzf "$tarball" -C "$cache/src"
    for patch_file in "${patch_files[@]}"; do step patch -d "$source_dir" -p1 --forward --input "$patch_file"; done
    touch "$source_dir/.voxd-patch-$patch_id"
  fi
  echo "building whisper.cpp $whisper_version static libraries (first time: about 4 minutes on 2 cores)" >&2
  # GGML_LLAMAFILE is off unless asked for. On, the products of a beam-search step (5 tokens) with the decoder's attention
  # caches run as tiled kernels instead of one dot product per output: the 10-minute side-by-side file took 102 s of CPU
  # instead of 120, the 67 s one 13.9 s instead of 15.8 (issue 21).
  step cmake -S "$source_dir" -B "$lib_build" -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DGGML_NATIVE=ON -DGGML_BLAS=ON -DGGML_BLAS_VENDOR=OpenBLAS \
    -DBLAS_LIBRARIES="$openblas_library" -DBLAS_INCLUDE_DIRS="$openblas_include" \
    -DWHISPER_BUILD_TESTS=OFF -DWHISPER_BUILD_EXAMPLES=ON -DWHISPER_BUILD_SERVER=OFF -DWHISPER_SDL2=OFF -DWHISPER_CURL=OFF \
    -DGGML_LLAMAFILE=ON
  # Of the examples only the quantize tool is built.
  step nice cmake --build "$lib_build" --target whisper whisper-quantize -j"$jobs"
  touch "$lib_build/.done"
fi
cp "$lib_build/bin/whisper-quantize" "$quantize.tmp" && mv "$quantize.tmp" "$quantize"

node_include="${NODE_INCLUDE_DIR:-$(dirname "$(dirname "$(command -v node)")")/include/node}"
[ -f "$node_include/node_api.h" ] || { echo "node_api.h not found in $node_include (set NODE_INCLUDE_DIR)" >&2; exit 1; }
addon_build="$out/addon"
step cmake -S "$here/whisper-addon" -B "$addon_build" -DCMAKE_BUILD_TYPE=Release -DWHISPER_SOURCE_DIR="$source_dir" -DWHISPER_BUILD_DIR="$lib_build" -DNODE_INCLUDE_DIR="$node_include" -DOPENBLAS_LIBRARY="$openblas_library"
step nice cmake --build "$addon_build" -j"$jobs"
cp "$addon_build/voxd_whisper.node" "$addon.tmp" && mv "$addon.tmp" "$addon"
echo "built $addon and $quantize" >&2
