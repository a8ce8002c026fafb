"""The benchmark prompt: N token ids below Qwen3's 151643 regular tokens,
the same for every bench script (seed 7), so their tables compare.

    python3 bench/depth_prompt.py N
"""
import random
import sys


def prompt(n):
    r = random.Random(7)
    return " ".join(str(r.randrange(151643)) for _ in range(n))


if __name__ == "__main__":
    print(prompt(int(sys.argv[1])))
