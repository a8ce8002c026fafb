#!/usr/bin/env python3
"""Compares a generated program's logits with the CPU reference's.

The files are .npy float32 [n_steps, n_vocab] (docs/reference.md). The error
of a row is max|a-b| / max|b| (relative to the reference row's largest logit);
the worst row is reported. Two modes:
  exact  f32/f16 weights under dequant numerics, against plain `lanec ref`:
         the greedy tokens of the first --tokens steps identical and every
         row within --rtol.
  top1   int8 activations, against `lanec ref --knobs` (the same planned
         numerics on the CPU): the fraction of rows whose argmax agrees is at
         least --min-top1, and, when --max-rel is given, every row within it.
         --f32-reference FILE (plain `lanec ref`) adds the cost of int8: the
         top-1 agreement and worst error against the f32 reference, reported,
         never gated.
Prints one line: mode, rows, worst (and median) relative error, top-1
agreement, the cost of int8 when asked, verdict. Exit status 1 when the check fails.
"""
import argparse
import sys

import numpy as np


def load_pair(program: str, reference: str):
    """The two files cut to their common rows, or an error message."""
    got = np.load(program).astype(np.float64)
    ref = np.load(reference).astype(np.float64)
    rows = min(len(got), len(ref))
    if got.ndim != 2 or ref.ndim != 2 or rows == 0 or got.shape[1:] != ref.shape[1:]:
        return None, None, f"shape mismatch: program {got.shape}, reference {ref.shape}"
    return got[:rows], ref[:rows], None


def relative_errors(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    return np.abs(got - ref).max(axis=1) / np.maximum(np.abs(ref).max(axis=1), 1e-30)


def top1_agreement(got: np.ndarray, ref: np.ndarray) -> float:
    return float((got.argmax(axis=1) == ref.argmax(axis=1)).mean())


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--program", required=True)
    p.add_argument("--reference", required=True)
    p.add_argument("--mode", choices=["exact", "top1"], required=True)
    p.add_argument("--rtol", type=float, default=1e-3)
    p.add_argument("--tokens", type=int, default=32)
    p.add_argument("--min-top1", type=float, default=0.99)
    p.add_argument("--max-rel", type=float, default=None,
                   help="top1 mode: also bound the worst row's relative error")
    p.add_argument("--f32-reference", default=None,
                   help="top1 mode: plain `lanec ref` logits; reports the cost of int8 (not gated)")
    args = p.parse_args()

    got, ref, error = load_pair(args.program, args.reference)
    if error:
        print(error)
        return 1
    rows = len(got)
    rel = relative_errors(got, ref)
    worst = int(rel.argmax())
    top1 = top1_agreement(got, ref)
    cost = ""
    if args.mode == "exact":
        n = min(args.tokens, rows)
        same_tokens = bool((got[:n].argmax(axis=1) == ref[:n].argmax(axis=1)).all())
        ok = same_tokens and rel.max() <= args.rtol
        detail = f"first {n} greedy tokens {'identical' if same_tokens else 'DIFFER'}, err <= {args.rtol:.0e}"
    else:
        ok = top1 >= args.min_top1
        detail = f"top-1 >= {args.min_top1:.2f}"
        if args.max_rel is not None:
            ok = ok and rel.max() <= args.max_rel
            detail += f", err <= {args.max_rel:.0e}"
        if args.f32_reference:
            got32, ref32, error = load_pair(args.program, args.f32_reference)
            if error:
                print(f"f32 reference: {error}")
                return 1
            rel32 = relative_errors(got32, ref32)
            cost = (f"; cost of int8 (vs f32 ref): top-1 {100 * top1_agreement(got32, ref32):.1f} %, "
                    f"worst rel err {rel32.max():.2e}, median {np.median(rel32):.1e}")
    verdict = "pass" if ok else "FAIL"
    print(f"{args.mode}: {rows} rows, worst rel err {rel.max():.2e} (row {worst}), median {np.median(rel):.1e}, "
          f"top-1 {100 * top1:.1f} %{cost}; {detail}: {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
