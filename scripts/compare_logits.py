#!/usr/bin/env python3
"""Compares a generated program's logits with the CPU reference's.

Both files are .npy float32 [n_steps, n_vocab] (docs/reference.md). Two modes:
  exact  f32/f16 weights under dequant numerics: the greedy tokens of the first
         --tokens steps identical and every row within --rtol relative error
         (max|a-b| / max|b| per row; the worst row is reported).
  top1   int8 activations: the fraction of rows whose argmax agrees is at
         least --min-top1; the logit error is reported, not bounded.
Prints one line: mode, rows, worst relative error, top-1 agreement, verdict.
Exit status 1 when the check fails.
"""
import argparse
import sys

import numpy as np


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--program", required=True)
    p.add_argument("--reference", required=True)
    p.add_argument("--mode", choices=["exact", "top1"], required=True)
    p.add_argument("--rtol", type=float, default=1e-3)
    p.add_argument("--tokens", type=int, default=32)
    p.add_argument("--min-top1", type=float, default=0.99)
    args = p.parse_args()

    got = np.load(args.program).astype(np.float64)
    ref = np.load(args.reference).astype(np.float64)
    rows = min(len(got), len(ref))
    if rows == 0 or got.shape[1:] != ref.shape[1:]:
        print(f"shape mismatch: program {got.shape}, reference {ref.shape}")
        return 1
    got, ref = got[:rows], ref[:rows]
    rel = np.abs(got - ref).max(axis=1) / np.maximum(np.abs(ref).max(axis=1), 1e-30)
    worst = int(rel.argmax())
    top1 = float((got.argmax(axis=1) == ref.argmax(axis=1)).mean())
    if args.mode == "exact":
        n = min(args.tokens, rows)
        same_tokens = bool((got[:n].argmax(axis=1) == ref[:n].argmax(axis=1)).all())
        ok = same_tokens and rel.max() <= args.rtol
        detail = f"first {n} greedy tokens {'identical' if same_tokens else 'DIFFER'}"
    else:
        ok = top1 >= args.min_top1
        detail = f"top-1 >= {args.min_top1:.2f}"
    verdict = "pass" if ok else "FAIL"
    print(f"{args.mode}: {rows} rows, worst rel err {rel.max():.2e} (row {worst}), "
          f"top-1 {100 * top1:.1f} %, {detail}: {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
