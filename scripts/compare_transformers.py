#!/usr/bin/env python3
"""Agreement check of lanec's CPU reference executor against Hugging Face
transformers (an implementation that is not ours).

For a GGUF model (llama, qwen2 or qwen3; f32 weights, or any format the
gguf package dequantizes, which both sides then use as the same f32 values), it
  1. builds the transformers model (LlamaForCausalLM / Qwen2ForCausalLM /
     Qwen3ForCausalLM) from the GGUF metadata and loads the GGUF tensors into
     it (undoing the Q/K row permutation GGUF applies to llama for its
     adjacent-pair RoPE; qwen2/qwen3 tensors are stored as in HF);
  2. runs `lanec ref MODEL --tokens <prompt> -n N --logits out.npy`;
  3. runs the HF model once, teacher-forced, on prompt + the tokens lanec
     generated (all but the last, which lanec never fed back), so both sides
     produce logits for the same P + N - 1 positions;
  4. reports the worst row's relative error max|a-b| / max|b| and whether the
     greedy tokens agree; exits non-zero if the error exceeds --tol (1e-4) or
     a token differs.

Usage:
  compare_transformers.py --lanec build/lanec model.gguf [--n 16] [--prompt-len 16]
  compare_transformers.py --lanec build/lanec --tiny [--workdir DIR]
      synthesizes qwen3-tiny, qwen2-tiny and llama-tiny (`lanec synth PRESET
      --type f32`) and checks each.

Needs numpy, torch, transformers (4.x or 5.x) and the `gguf` package.
"""
import argparse
import inspect
import os
import subprocess
import sys
import tempfile

import numpy as np

ARCH_CLASSES = {
    "llama": ("LlamaConfig", "LlamaForCausalLM"),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM"),
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM"),
}
TINY_PRESETS = ["qwen3-tiny", "qwen2-tiny", "llama-tiny"]


# ---------------------------------------------------------------- GGUF side

def read_gguf(path):
    import gguf  # imported here so --help works without it

    reader = gguf.GGUFReader(path)

    def field(key, default=None):
        f = reader.fields.get(key)
        if f is None:
            if default is None:
                raise SystemExit(f"{path}: missing metadata key {key}")
            return default
        value = f.contents()
        if isinstance(value, list):  # per-layer arrays: the dense models use one value
            if len(set(value)) != 1:
                raise SystemExit(f"{path}: {key}: per-layer values are not supported")
            value = value[0]
        return value

    tensors = {}
    for t in reader.tensors:
        shape = tuple(int(d) for d in reversed(list(t.shape)))  # GGUF ne reversed: [out, in]
        if t.tensor_type == gguf.GGMLQuantizationType.F32:
            values = np.array(t.data, dtype=np.float32)
        else:
            # Quantized files: dequantize with the gguf package (ggml's block
            # layouts), as lanec's weight store does; both sides then see the
            # same f32 weights.
            try:
                values = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
            except NotImplementedError:
                raise SystemExit(f"{path}: {t.name}: the gguf package cannot dequantize "
                                 f"{t.tensor_type.name}; use f32 weights (lanec synth --type f32)")
        tensors[t.name] = values.reshape(shape)
    return field, tensors


def hparams(field, tensors):
    arch = field("general.architecture")
    if arch not in ARCH_CLASSES:
        raise SystemExit(f"unsupported architecture {arch!r} (supported: {', '.join(ARCH_CLASSES)})")
    a = arch + "."
    n_embd = int(field(a + "embedding_length"))
    n_head = int(field(a + "attention.head_count"))
    hp = {
        "arch": arch,
        "n_vocab": int(tensors["token_embd.weight"].shape[0]),
        "n_embd": n_embd,
        "n_layer": int(field(a + "block_count")),
        "n_ff": int(field(a + "feed_forward_length")),
        "n_head": n_head,
        "n_head_kv": int(field(a + "attention.head_count_kv", n_head)),
        "head_dim": int(field(a + "attention.key_length", n_embd // n_head)),
        "n_ctx": int(field(a + "context_length")),
        "rope_theta": float(np.float32(field(a + "rope.freq_base", 10000.0))),
        "rms_eps": float(np.float32(field(a + "attention.layer_norm_rms_epsilon", 1e-5))),
        "tied": "output.weight" not in tensors,
    }
    n_rot = int(field(a + "rope.dimension_count", hp["head_dim"]))
    if n_rot != hp["head_dim"]:
        raise SystemExit(f"partial rotary (rope.dimension_count {n_rot} != head_dim) not supported")
    return hp


# ---------------------------------------------------------------- HF side

def make_config(hp):
    import transformers

    config_cls = getattr(transformers, ARCH_CLASSES[hp["arch"]][0])
    kwargs = dict(
        vocab_size=hp["n_vocab"],
        hidden_size=hp["n_embd"],
        intermediate_size=hp["n_ff"],
        num_hidden_layers=hp["n_layer"],
        num_attention_heads=hp["n_head"],
        num_key_value_heads=hp["n_head_kv"],
        head_dim=hp["head_dim"],
        max_position_embeddings=hp["n_ctx"],
        rms_norm_eps=hp["rms_eps"],
        tie_word_embeddings=hp["tied"],
        hidden_act="silu",
    )
    if hp["arch"] == "llama":
        kwargs.update(attention_bias=False, mlp_bias=False)
    # transformers 5 keeps the rope base in config.rope_parameters; 4.x takes rope_theta.
    params = inspect.signature(config_cls.__init__).parameters
    rope = {"rope_type": "default", "rope_theta": hp["rope_theta"]}
    if "rope_parameters" in params:
        kwargs["rope_parameters"] = rope
    else:
        kwargs["rope_theta"] = hp["rope_theta"]
    config = config_cls(**kwargs)
    # Whatever the constructor did with them, pin the values the model reads.
    config.head_dim = hp["head_dim"]
    if hasattr(config, "rope_parameters") and isinstance(getattr(config, "rope_parameters"), dict):
        config.rope_parameters.update(rope)
    if hasattr(config, "rope_theta") or "rope_parameters" not in params:
        config.rope_theta = hp["rope_theta"]
    for flag in ("use_sliding_window",):
        if hasattr(config, flag):
            setattr(config, flag, False)
    return config


def unpermute_rope_rows(w, n_heads):
    """Inverse of the Q/K row permutation GGUF converters apply to llama, which
    interleaves each head's two halves so that adjacent-pair RoPE equals HF's
    rotate_half RoPE."""
    out_dim = w.shape[0]
    head_dim = out_dim // n_heads
    return (w.reshape(n_heads, head_dim // 2, 2, *w.shape[1:])
             .swapaxes(1, 2)
             .reshape(w.shape))


def hf_state_dict(hp, tensors):
    import torch

    sd = {}

    def put(hf_name, gguf_name, transform=None):
        if gguf_name not in tensors:
            raise SystemExit(f"missing tensor {gguf_name}")
        w = tensors[gguf_name]
        if transform:
            w = transform(w)
        sd[hf_name] = torch.from_numpy(np.ascontiguousarray(w))

    llama = hp["arch"] == "llama"
    put("model.embed_tokens.weight", "token_embd.weight")
    put("model.norm.weight", "output_norm.weight")
    put("lm_head.weight", "token_embd.weight" if hp["tied"] else "output.weight")
    for l in range(hp["n_layer"]):
        g = f"blk.{l}."
        h = f"model.layers.{l}."
        put(h + "input_layernorm.weight", g + "attn_norm.weight")
        put(h + "post_attention_layernorm.weight", g + "ffn_norm.weight")
        q_fix = (lambda w: unpermute_rope_rows(w, hp["n_head"])) if llama else None
        k_fix = (lambda w: unpermute_rope_rows(w, hp["n_head_kv"])) if llama else None
        put(h + "self_attn.q_proj.weight", g + "attn_q.weight", q_fix)
        put(h + "self_attn.k_proj.weight", g + "attn_k.weight", k_fix)
        put(h + "self_attn.v_proj.weight", g + "attn_v.weight")
        put(h + "self_attn.o_proj.weight", g + "attn_output.weight")
        if hp["arch"] == "qwen2":
            for p in "qkv":
                put(h + f"self_attn.{p}_proj.bias", g + f"attn_{p}.bias")
        if hp["arch"] == "qwen3":
            put(h + "self_attn.q_norm.weight", g + "attn_q_norm.weight")
            put(h + "self_attn.k_norm.weight", g + "attn_k_norm.weight")
        put(h + "mlp.gate_proj.weight", g + "ffn_gate.weight")
        put(h + "mlp.up_proj.weight", g + "ffn_up.weight")
        put(h + "mlp.down_proj.weight", g + "ffn_down.weight")
    return sd


def build_hf_model(hp, tensors):
    import torch
    import transformers

    config = make_config(hp)
    try:
        config._attn_implementation = "eager"
    except Exception:  # noqa: BLE001 - older/newer configs guard this attribute
        pass
    model_cls = getattr(transformers, ARCH_CLASSES[hp["arch"]][1])
    torch.manual_seed(0)
    model = model_cls(config).to(torch.float32).eval()
    sd = hf_state_dict(hp, tensors)
    result = model.load_state_dict(sd, strict=False)
    missing = [k for k in result.missing_keys if not (hp["tied"] and k == "lm_head.weight")]
    if missing or result.unexpected_keys:
        raise SystemExit(f"state dict mismatch: missing {missing}, unexpected {result.unexpected_keys}")
    if hp["tied"]:
        model.tie_weights()
    return model


def hf_logits(model, ids):
    import torch

    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids], dtype=torch.long), use_cache=False)
    return out.logits[0].to(torch.float32).numpy()


# ---------------------------------------------------------------- lanec side

def run_lanec(lanec, model_path, prompt, n, workdir):
    npy = os.path.join(workdir, os.path.basename(model_path) + ".logits.npy")
    cmd = [lanec, "ref", model_path, "--tokens", " ".join(map(str, prompt)), "-n", str(n),
           "--logits", npy]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
    generated = None
    for line in proc.stdout.splitlines():
        if line.startswith("generated:"):
            generated = [int(t) for t in line.split(":", 1)[1].split()]
    if generated is None or len(generated) != n:
        raise SystemExit(f"could not read the generated ids from lanec's output:\n{proc.stdout}")
    logits = np.load(npy)
    return generated, logits


# ---------------------------------------------------------------- check

def compare(lanec, model_path, n, prompt_len, seed, tol, workdir):
    field, tensors = read_gguf(model_path)
    hp = hparams(field, tensors)
    rng = np.random.default_rng(seed)
    prompt = [int(t) for t in rng.integers(0, hp["n_vocab"], size=prompt_len)]

    generated, ours = run_lanec(lanec, model_path, prompt, n, workdir)
    steps = prompt_len + n - 1
    if ours.shape != (steps, hp["n_vocab"]):
        raise SystemExit(f"lanec logits: expected shape {(steps, hp['n_vocab'])}, got {ours.shape}")

    model = build_hf_model(hp, tensors)
    theirs = hf_logits(model, prompt + generated[:-1])

    row_err = np.abs(ours - theirs).max(axis=1) / np.abs(theirs).max(axis=1)
    worst = int(row_err.argmax())
    hf_tokens = [int(t) for t in theirs[prompt_len - 1:].argmax(axis=1)]
    tokens_match = hf_tokens == generated
    ok = bool(row_err[worst] <= tol) and tokens_match
    print(f"{os.path.basename(model_path)} ({hp['arch']}, {'tied' if hp['tied'] else 'untied'} head, "
          f"{hp['n_layer']} layers): max rel logit error {row_err[worst]:.3e} (row {worst} of {steps}); "
          f"greedy tokens {'match' if tokens_match else 'DIFFER'} -> {'OK' if ok else 'FAIL'}")
    if not tokens_match:
        print(f"  lanec: {generated}\n  hf:    {hf_tokens}")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", nargs="?", help="GGUF model with f32 weights")
    ap.add_argument("--lanec", required=True, help="path to the lanec binary")
    ap.add_argument("--tiny", action="store_true", help="synthesize and check the three tiny presets")
    ap.add_argument("-n", "--n", type=int, default=16, help="tokens to generate (default 16)")
    ap.add_argument("--prompt-len", type=int, default=16, help="random prompt ids (default 16)")
    ap.add_argument("--seed", type=int, default=0, help="prompt seed")
    ap.add_argument("--tol", type=float, default=1e-4, help="max relative logit error (default 1e-4)")
    ap.add_argument("--workdir", help="where models and logits go (default: a temporary folder)")
    args = ap.parse_args()
    if bool(args.model) == args.tiny:
        ap.error("give a MODEL or --tiny")
    lanec = os.path.abspath(args.lanec)

    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or tmp
        os.makedirs(workdir, exist_ok=True)
        models = [args.model] if args.model else []
        for preset in TINY_PRESETS if args.tiny else []:
            path = os.path.join(workdir, preset + "-f32.gguf")
            subprocess.run([lanec, "synth", preset, "--type", "f32", "-o", path], check=True,
                           capture_output=True)
            models.append(path)
        results = [compare(lanec, m, args.n, args.prompt_len, args.seed, args.tol, workdir)
                   for m in models]
    if not all(results):
        sys.exit(1)


if __name__ == "__main__":
    main()
