#!/usr/bin/env python3
"""Regenerates the independent Qwen3 tokenizer test vectors.

Builds a Hugging Face `tokenizers` tokenizer the way Qwen2/Qwen3's
tokenizer.json describes it (NFC normalizer, the Qwen2 Split regex, ByteLevel
without prefix space, BPE over the GGUF's tokens and merges, control and
user-defined tokens as added tokens) from tests/data/vocab/qwen3-vocab.gguf,
encodes a set of varied texts and writes them with the ids in the same format
as the ggml vocabulary tests:

  tests/tokenizer/qwen3-vocab.inp   inputs separated by "\n__ggml_vocab_test__\n"
  tests/tokenizer/qwen3-vocab.out   one line of ids per input, each id preceded by a space

Needs: pip install gguf tokenizers
Run from the repository root: python3 scripts/qwen3_tokenizer_reference.py
"""
import pathlib
import unicodedata

from gguf import GGUFReader
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

ROOT = pathlib.Path(__file__).resolve().parent.parent
VOCAB = ROOT / "tests/data/vocab/qwen3-vocab.gguf"
OUT_DIR = ROOT / "tests/tokenizer"
SEPARATOR = "\n__ggml_vocab_test__\n"

QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")

TEXTS = [
    "Hello world",
    " Hello World!",
    "def fibonacci(n: int) -> int:\n    if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n - 2)\n",
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n你好，世界！<|im_end|>\n<|im_start|>assistant\n",
    "<think>\n\n</think>\n\nThe answer is 42.",
    "我想在apple工作1314151天～ 今天天气怎么样？",
    "Emoji 🦙🚀 😶‍🌫️ ✅ 👨‍👩‍👧‍👦 done",
    "numbers 3.14159 1,000,000 0xDEADBEEF 2026-11-29T23:11:48Z 123456789",
    "tabs\t\tand   runs    of spaces \n\n\n   \r\n  trailing   ",
    "It's I'M you'll they'VE we'd 'quoted' \"double\"",
    "{\"json\": [1, 2, 3], \"nested\": {\"a\": null}} <html><body>&amp;</body></html>",
    "Ελληνικά русский العربية हिन्दी 日本語のテキスト 한국어",
    "Cửa Việt Führer ½ naïve café",
    "    indented\n        more\n\ttabbed\n",
    "a<|endoftext|>b<tool_call>{}</tool_call>",
    "",
]


def field(reader, key):
    return reader.fields[key].contents()


def build_tokenizer():
    reader = GGUFReader(str(VOCAB))
    tokens = field(reader, "tokenizer.ggml.tokens")
    types = field(reader, "tokenizer.ggml.token_type")
    merges = field(reader, "tokenizer.ggml.merges")
    vocab = {tok: i for i, (tok, kind) in enumerate(zip(tokens, types)) if kind == 1}
    merge_pairs = [tuple(m.split(" ", 1)) for m in merges]
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merge_pairs, ignore_merges=False))
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tokenizer.decoder = decoders.ByteLevel()
    added = [AddedToken(tok, special=(kind == 3), normalized=False)
             for tok, kind in zip(tokens, types) if kind in (3, 4)]
    tokenizer.add_tokens(added)
    for token in added:
        assert tokenizer.token_to_id(token.content) == tokens.index(token.content), token.content
    return tokenizer


def main():
    tokenizer = build_tokenizer()
    lines = []
    for text in TEXTS:
        # lanec does not normalize (as llama.cpp); keep the inputs NFC so both agree.
        assert unicodedata.normalize("NFC", text) == text, text
        ids = tokenizer.encode(text, add_special_tokens=False).ids
        assert tokenizer.decode(ids, skip_special_tokens=False) == text, text
        lines.append("".join(f" {i}" for i in ids))
    # As in the ggml files, the empty last entry is what follows the final separator.
    assert TEXTS[-1] == ""
    (OUT_DIR / "qwen3-vocab.inp").write_text(SEPARATOR.join(TEXTS[:-1]) + SEPARATOR, encoding="utf-8")
    (OUT_DIR / "qwen3-vocab.out").write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    print(f"wrote {len(TEXTS)} inputs to {OUT_DIR}")


if __name__ == "__main__":
    main()
