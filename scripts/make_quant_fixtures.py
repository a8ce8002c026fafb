#!/usr/bin/env python3
"""Writes the quant codec fixtures in tests/data/quant/ from an independent
implementation: the PyPI `gguf` package (gguf.quants) and numpy.

For each format F (lower-case ggml name) it writes, all little-endian raw:
  F.dequant_in.bin   quantized blocks: blocks of quantized random floats (where
                     gguf can quantize F) followed by random bytes whose scale
                     fields are finite
  F.dequant_out.f32  gguf.quants.dequantize of those blocks
and, for the formats gguf can quantize:
  F.quant_in.f32     random floats (plus edge values for f16/bf16)
  F.quant_out.bin    gguf.quants.quantize of them

The gguf package has no k-quant quantizers. For those, and as a cross-check
that gguf's quantizers are ggml's, the script can call ggml's own reference C
quantizers (quantize_row_*_ref in ggml-quants.c): set GGML_SRC to a ggml source
tree (the folder holding src/ggml-quants.c and include/; e.g. the vendored copy
in the ggml-python 0.0.45 sdist, `pip download ggml-python==0.0.45 --no-deps
--no-binary :all:`). The script then compiles that one file with gcc -O2 for
baseline x86-64 (no -march, so no FMA contraction: plain IEEE single precision,
which is what lanec's codecs compute) and writes, for q4_K, q5_K and q6_K:
  F.quant_in.f32 / F.quant_out.bin   ggml's quantize_row_F_ref of random floats
  F.quant_out.dequant.f32            gguf's dequantization of those blocks
It also checks that gguf's quantizers and dequantizers agree bit for bit with
ggml's on the fixture data.
Without GGML_SRC those three files are left as they are.

Run from the repository root: python3 scripts/make_quant_fixtures.py
The output is deterministic (fixed seeds); re-running must leave git clean.
"""
import ctypes
import os
import subprocess
import tempfile

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf import quants
from gguf.constants import GGML_QUANT_SIZES

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "quant")

# Formats and, per format, the byte offsets of fp16 scale fields inside a block
# (they must be finite in the random-byte blocks).
FORMATS = {
    "f16": (T.F16, []),
    "bf16": (T.BF16, []),
    "q8_0": (T.Q8_0, [0]),
    "q4_0": (T.Q4_0, [0]),
    "q4_1": (T.Q4_1, [0, 2]),
    "q5_0": (T.Q5_0, [0]),
    "q5_1": (T.Q5_1, [0, 2]),
    "q4_K": (T.Q4_K, [0, 2]),
    "q5_K": (T.Q5_K, [0, 2]),
    "q6_K": (T.Q6_K, [208]),
    "mxfp4": (T.MXFP4, []),
}
QUANTIZABLE = {"f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "mxfp4"}


def random_floats(rng, n, block):
    """Normal values with a per-block magnitude from 1e-4 to 1e3, an all-zero
    block, a constant block and a block with one outlier."""
    x = rng.standard_normal(n).astype(np.float32)
    blocks = x.reshape(-1, block)
    mags = 10.0 ** rng.uniform(-4, 3, size=(blocks.shape[0], 1))
    blocks *= mags.astype(np.float32)
    if blocks.shape[0] >= 4:
        blocks[0, :] = 0.0
        blocks[1, :] = np.float32(0.75)
        blocks[2, 5] = np.float32(-40.0)
    return blocks.reshape(-1)


def finite_halves(rng, count):
    h = rng.integers(0, 1 << 16, size=count, dtype=np.uint32).astype(np.uint16)
    exp_all_ones = (h & 0x7C00) == 0x7C00
    h[exp_all_ones] &= np.uint16(0xBFFF)  # drop one exponent bit: finite
    return h


def random_blocks(rng, qtype, half_offsets, n_blocks):
    _, type_size = GGML_QUANT_SIZES[qtype]
    raw = rng.integers(0, 256, size=(n_blocks, type_size), dtype=np.uint8)
    for off in half_offsets:
        raw[:, off:off + 2] = finite_halves(rng, n_blocks).view(np.uint8).reshape(n_blocks, 2)
    return raw.reshape(-1)


def float_edge_values():
    f = np.float32
    vals = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, 65504.0, 65519.996, 65520.0, 1e9,
            6.103515625e-05, 5.960464477539063e-08, 2.980232238769531e-08,
            2.9802326e-08, 8.940696716308594e-08, 1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11,
            1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8, 3.4028235e38, 1e-45, -1e-40]
    return np.array(vals, dtype=f)


def write(name, arr):
    with open(os.path.join(OUT, name), "wb") as fh:
        fh.write(np.ascontiguousarray(arr).tobytes())


GGML_STUBS = r"""
#include <stdio.h>
#include <stdlib.h>
/* Symbols ggml-quants.c references but the reference quantizers never call. */
void ggml_abort(const char* file, int line, const char* fmt, ...) {
  (void)fmt; fprintf(stderr, "ggml_abort at %s:%d\n", file, line); abort();
}
size_t ggml_row_size(int type, long long n) { (void)type; (void)n; abort(); }
const char* ggml_type_name(int type) { (void)type; return "?"; }
size_t ggml_type_size(int type) { (void)type; abort(); }
"""


def build_ggml_reference(src_root, workdir):
    stubs = os.path.join(workdir, "stubs.c")
    with open(stubs, "w") as fh:
        fh.write(GGML_STUBS)
    lib = os.path.join(workdir, "libggml_quants_ref.so")
    subprocess.run(["gcc", "-O2", "-std=gnu11", "-fPIC", "-shared", "-o", lib,
                    os.path.join(src_root, "src", "ggml-quants.c"), stubs,
                    "-I", os.path.join(src_root, "include"), "-I", os.path.join(src_root, "src"),
                    "-I", os.path.join(src_root, "src", "ggml-cpu"), "-lm"], check=True)
    return ctypes.CDLL(lib)


def ggml_quantize(lib, name, x, qtype):
    _, type_size = GGML_QUANT_SIZES[qtype]
    block, _ = GGML_QUANT_SIZES[qtype]
    x = np.ascontiguousarray(x, dtype=np.float32)
    out = np.zeros(x.size // block * type_size, dtype=np.uint8)
    fn = getattr(lib, f"quantize_row_{name}_ref")
    fn.restype = None
    fn(x.ctypes.data_as(ctypes.c_void_p), out.ctypes.data_as(ctypes.c_void_p),
       ctypes.c_int64(x.size))
    return out


def ggml_dequantize(lib, name, blocks, qtype):
    block, type_size = GGML_QUANT_SIZES[qtype]
    blocks = np.ascontiguousarray(blocks, dtype=np.uint8)
    out = np.zeros(blocks.size // type_size * block, dtype=np.float32)
    fn = getattr(lib, f"dequantize_row_{name}")
    fn.restype = None
    fn(blocks.ctypes.data_as(ctypes.c_void_p), out.ctypes.data_as(ctypes.c_void_p),
       ctypes.c_int64(out.size))
    return out


def write_ggml_fixtures(src_root):
    with tempfile.TemporaryDirectory() as workdir:
        lib = build_ggml_reference(src_root, workdir)
        # gguf's quantizers must be ggml's reference ones bit for bit.
        rng = np.random.default_rng(7)
        for name in ("q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "mxfp4"):
            qtype = FORMATS[name][0]
            x = random_floats(rng, 2048, 32)
            want = ggml_quantize(lib, name, x, qtype)
            got = quants.quantize(x, qtype).reshape(-1)
            assert np.array_equal(got, want), f"gguf and ggml disagree on {name}"
        rng = np.random.default_rng(20261130)
        for name in ("q4_K", "q5_K", "q6_K"):
            qtype = FORMATS[name][0]
            x = random_floats(rng, 2048, 256)
            x[3 * 256:4 * 256] = np.abs(x[3 * 256:4 * 256]) + np.float32(0.25)  # all positive
            x[4 * 256:4 * 256 + 16] = np.float32(1e-6)  # one tiny sub-block among large ones
            write(f"{name}.quant_in.f32", x)
            q = ggml_quantize(lib, name, x, qtype)
            write(f"{name}.quant_out.bin", q)
            deq = quants.dequantize(q, qtype).astype(np.float32).reshape(-1)
            assert np.array_equal(deq.view(np.uint32), ggml_dequantize(lib, name, q, qtype).view(np.uint32))
            write(f"{name}.quant_out.dequant.f32", deq)
        # The dequantization fixtures: gguf and ggml must agree on every bit.
        for name in ("q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_K", "q5_K", "q6_K", "mxfp4"):
            qtype = FORMATS[name][0]
            with open(os.path.join(OUT, f"{name}.dequant_in.bin"), "rb") as fh:
                blocks = np.frombuffer(fh.read(), dtype=np.uint8)
            want = quants.dequantize(blocks, qtype).astype(np.float32).reshape(-1)
            got = ggml_dequantize(lib, name, blocks, qtype)
            assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), f"dequantize {name}"


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20261129)
    for name, (qtype, half_offsets) in FORMATS.items():
        block, _ = GGML_QUANT_SIZES[qtype]
        n = 512 if block == 32 or block == 1 else 1024
        parts = []
        if name in QUANTIZABLE and block > 1:
            parts.append(quants.quantize(random_floats(rng, n // 2, block), qtype).reshape(-1))
            parts.append(random_blocks(rng, qtype, half_offsets, n // 2 // block))
        elif block == 1:
            raw = rng.integers(0, 1 << 16, size=n, dtype=np.uint32).astype(np.uint16)
            exp_mask = 0x7C00 if name == "f16" else 0x7F80
            mant_mask = 0x03FF if name == "f16" else 0x007F
            nan = ((raw & exp_mask) == exp_mask) & ((raw & mant_mask) != 0)
            raw[nan] &= np.uint16(~mant_mask & 0xFFFF)  # NaN → inf: compared bitwise
            parts.append(raw.view(np.uint8))
        else:
            parts.append(random_blocks(rng, qtype, half_offsets, n // block))
        blocks = np.concatenate(parts).astype(np.uint8)
        write(f"{name}.dequant_in.bin", blocks)
        deq = quants.dequantize(blocks, qtype).astype(np.float32).reshape(-1)
        write(f"{name}.dequant_out.f32", deq)

        if name in QUANTIZABLE:
            x = random_floats(rng, 512, max(block, 32))
            if block == 1:
                x = np.concatenate([float_edge_values(), -float_edge_values(), x])
                if name == "bf16":
                    nans = np.array([0x7FC00000, 0xFF800001, 0x7F812345], dtype=np.uint32)
                    x = np.concatenate([x, nans.view(np.float32)])
            write(f"{name}.quant_in.f32", x)
            q = quants.quantize(x, qtype)
            write(f"{name}.quant_out.bin", q.view(np.uint8).reshape(-1))

    if os.environ.get("GGML_SRC"):
        write_ggml_fixtures(os.environ["GGML_SRC"])


if __name__ == "__main__":
    main()
