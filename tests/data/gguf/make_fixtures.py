#!/usr/bin/env python3
"""Writes python_all_types.gguf with the PyPI `gguf` package: a fixture made by
an independent writer, so the reader test does not only check the reader
against lanec's own writer. Run from this directory; the output is committed."""
import numpy as np
import gguf

w = gguf.GGUFWriter("python_all_types.gguf", arch="testarch")
w.add_uint8("t.u8", 200)
w.add_int8("t.i8", -100)
w.add_uint16("t.u16", 60000)
w.add_int16("t.i16", -30000)
w.add_uint32("t.u32", 4000000000)
w.add_int32("t.i32", -2000000000)
w.add_float32("t.f32", 1.5)
w.add_uint64("t.u64", 18000000000000000000)
w.add_int64("t.i64", -9000000000000000000)
w.add_float64("t.f64", 2.25)
w.add_bool("t.bool", True)
w.add_string("t.string", "héllo")
w.add_array("t.arr_str", ["a", "bc", ""])
w.add_array("t.arr_f32", [0.5, -1.0])
w.add_key_value("t.arr_u8", [1, 2, 255], gguf.GGUFValueType.ARRAY, sub_type=gguf.GGUFValueType.UINT8)
w.add_key_value("t.arr_i64", [-5, 6], gguf.GGUFValueType.ARRAY, sub_type=gguf.GGUFValueType.INT64)
w.add_key_value("t.arr_bool", [True, False], gguf.GGUFValueType.ARRAY, sub_type=gguf.GGUFValueType.BOOL)
w.add_tensor("w.f32", np.arange(12, dtype=np.float32).reshape(3, 4))
w.add_tensor("w.f16", np.arange(64, dtype=np.float16).reshape(2, 32))
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
