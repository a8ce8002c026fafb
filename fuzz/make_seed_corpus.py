#!/usr/bin/env python3
"""Writes the seed corpus fuzz/corpus/gguf_reader/: a few tiny GGUF files,
valid and broken, packed by hand (little-endian) so each is a few hundred
bytes. Run from the repository root; the output is committed."""
import os
import struct

OUT = "fuzz/corpus/gguf_reader"


def s(text):
    b = text.encode()
    return struct.pack("<Q", len(b)) + b


def kv(key, type_id, payload):
    return s(key) + struct.pack("<I", type_id) + payload


def tensor_info(name, ne, ggml_type, offset):
    return s(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", n) for n in ne) + \
        struct.pack("<IQ", ggml_type, offset)


def gguf(version, kvs, tensors, data, alignment=32):
    head = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs)) + b"".join(kvs) + b"".join(tensors)
    head += b"\0" * (-len(head) % alignment)
    return head + data


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


os.makedirs(OUT, exist_ok=True)
every_kv = [
    kv("general.architecture", 8, s("llama")),
    kv("k.u8", 0, b"\x07"), kv("k.i8", 1, b"\xf9"), kv("k.u16", 2, struct.pack("<H", 7)),
    kv("k.i16", 3, struct.pack("<h", -7)), kv("k.u32", 4, struct.pack("<I", 7)),
    kv("k.i32", 5, struct.pack("<i", -7)), kv("k.f32", 6, struct.pack("<f", 0.5)),
    kv("k.bool", 7, b"\x01"), kv("k.u64", 10, struct.pack("<Q", 7)),
    kv("k.i64", 11, struct.pack("<q", -7)), kv("k.f64", 12, struct.pack("<d", 0.25)),
    kv("k.arr", 9, struct.pack("<IQ", 8, 2) + s("a") + s("bc")),
    kv("k.arr32", 9, struct.pack("<IQ", 4, 3) + struct.pack("<3I", 1, 2, 3)),
]
f32 = struct.pack("<8f", *range(8))
q8 = b"\x11" * 34
tensors = [tensor_info("t.f32", [4, 2], 0, 0), tensor_info("t.q8", [32], 8, 32)]
valid = gguf(3, every_kv, tensors, f32 + q8 + b"\0" * 30)
write("valid_v3_every_type.gguf", valid)
write("valid_v2.gguf", gguf(2, every_kv[:3], tensors, f32 + q8))
aligned1 = [kv("general.alignment", 4, struct.pack("<I", 1))]
write("valid_align1.gguf", gguf(3, aligned1, [tensor_info("t", [3], 0, 0), tensor_info("u", [1], 1, 12)],
                                b"\1" * 14, alignment=1))
write("truncated.gguf", valid[:len(valid) // 2])
write("huge_array_count.gguf", gguf(3, [kv("a", 9, struct.pack("<IQ", 4, 1 << 63))], [], b""))
write("misaligned_offset.gguf", gguf(3, [], [tensor_info("t", [4], 0, 3)], b"\0" * 64))
write("bad_version.gguf", b"GGUF" + struct.pack("<IQQ", 1, 0, 0))
