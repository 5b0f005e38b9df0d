"""LLVM instructions that Numba's scalar code has no spelling for, as Numba ``@intrinsic`` functions: bit casts between
floats and integers, fused multiply-add, a float32 reciprocal estimate, a select without a branch, copysign, scaling by
a power of two (ldexp), a few float32 bit operations, and the 512-bit vector-width hint. Each lowers to one or a few
plain LLVM instructions, so a loop using them still vectorises; :mod:`minitensor.backends.fast_math` builds its functions on them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import llvmlite.binding as llvm
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.extending import intrinsic


def cpu_has(feature: str) -> bool:
    """Whether the host CPU has ``feature`` (an LLVM name such as "avx512f"). LLVM maps every feature it knows to
    True or False: its flattened string lists the missing ones too ("-avx512f"), so a substring test is wrong."""
    return llvm.get_host_cpu_features().get(feature, False) is True


SCALEF = cpu_has("avx512f")
"""Whether :func:`ldexp` is llvm.ldexp, which LLVM vectorises to AVX-512's ``vscalefpd`` (one instruction; elsewhere
a vector ldexp is a libm call per element, so it is built from two power-of-two products instead)."""


# --- bit casts ------------------------------------------------------------------------------------


def _as_bits(typingctx, x):  # type: ignore[no-untyped-def]
    """The IEEE 754 bits of a float64 as an int64 (one LLVM bitcast: vectorises)."""
    if x != types.float64:
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


as_bits: Callable[..., Any] = intrinsic(_as_bits)


def _from_bits(typingctx, n):  # type: ignore[no-untyped-def]
    """The float64 whose IEEE 754 bits are the int64 ``n`` (one LLVM bitcast: vectorises)."""
    if n != types.int64:
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


from_bits: Callable[..., Any] = intrinsic(_from_bits)


def _fma(typingctx, a, b, c):  # type: ignore[no-untyped-def]
    """a * b + c rounded once (llvm.fma: one instruction where the CPU has FMA, and it vectorises)."""
    if not (a == b == c and a in (types.float64, types.float32)):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.fma(*args)

    return a(a, a, a), codegen


fma: Callable[..., Any] = intrinsic(_fma)


def _recip_estimate(typingctx, d):  # type: ignore[no-untyped-def]
    """1 / d to float32 precision (relative error 2^-24), as a float64: a float32 division, which the CPU does for
    twice the lanes at the cost of one float64 division (the division is these functions' slowest step)."""
    if d != types.float64:
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        single = builder.fptrunc(args[0], ir.FloatType())
        return builder.fpext(builder.fdiv(ir.Constant(ir.FloatType(), 1.0), single), ir.DoubleType())

    return types.float64(types.float64), codegen


recip_estimate: Callable[..., Any] = intrinsic(_recip_estimate)


def _select(typingctx, condition, a, b):  # type: ignore[no-untyped-def]
    """``a if condition else b`` as one LLVM select: no branch and no phi in Numba's IR (a conditional expression
    inlined two levels deep trips Numba's SSA checks), and it vectorises as a blend."""
    kind = types.unliteral(a)
    if condition != types.boolean or types.unliteral(b) != kind or kind not in (types.float64, types.float32, types.int64):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.select(*args)

    return kind(types.boolean, kind, kind), codegen


select: Callable[..., Any] = intrinsic(_select)


def _prefer_wide(typingctx):  # type: ignore[no-untyped-def]
    """Ask LLVM to vectorise the function this is called in with 512-bit registers where the CPU has them (LLVM
    defaults to 256 on AVX-512 machines). fast_math's functions are arithmetic-bound, so wider is faster; every
    op's element-wise loop calls it too, where it streams memory as fast as NumPy's 512-bit loops (a 10^7 float64
    negation in C: 12.2 ms at 512 bits, NumPy 12.1-12.5, 12.7-13.2 at 256)."""

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        # llvmlite only names standard attributes; this string one is what clang's -mprefer-vector-width sets.
        set.add(builder.function.attributes, '"prefer-vector-width"="512"')
        return context.get_dummy_value()

    return types.none(), codegen


prefer_wide: Callable[..., Any] = intrinsic(_prefer_wide)


def _fdiv(typingctx, a, b):  # type: ignore[no-untyped-def]
    """a / b (float32 or float64), correctly rounded, with IEEE results at b == 0 (Numba's ``/`` tests b and raises:
    a branch per element)."""
    if not (a == b and a in (types.float32, types.float64)):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.fdiv(*args)

    return a(a, a), codegen


def _exp2_scale32(typingctx, p, shifted):  # type: ignore[no-untyped-def]
    """p 2^k for float32 ``p`` and k = bits(shifted) - bits(1.5 * 2^23), as 2^(k >> 1) 2^(k - (k >> 1)): both
    factors normal for |k| <= 252, so a result in the subnormals rounds once (on AVX-512 one ``vscalefps``, the same
    result). Integer work in int32, in LLVM (Numba would widen int32 arithmetic to int64)."""
    if not (p == shifted == types.float32):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        i32 = ir.IntType(32)
        k = builder.sub(builder.bitcast(args[1], i32), ir.Constant(i32, 0x4B400000))
        if SCALEF:  # vscalefps
            f32 = ir.FloatType()
            fn = builder.module.declare_intrinsic("llvm.ldexp", [f32, i32], ir.FunctionType(f32, [f32, i32]))
            return builder.call(fn, [args[0], k])
        k1 = builder.ashr(k, ir.Constant(i32, 1))

        def power(e):  # type: ignore[no-untyped-def]
            return builder.bitcast(builder.shl(builder.add(e, ir.Constant(i32, 127)), ir.Constant(i32, 23)), ir.FloatType())

        return builder.fmul(builder.fmul(args[0], power(k1)), power(builder.sub(k, k1)))

    return types.float32(types.float32, types.float32), codegen


def _log_split32(typingctx, x):  # type: ignore[no-untyped-def]
    """(z, k) with float32 x = 2^k z, z in [sqrt(1/2), sqrt(2)), for positive normal x (musl's logf reduction)."""
    if x != types.float32:
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        i32 = ir.IntType(32)
        ix = builder.add(builder.bitcast(args[0], i32), ir.Constant(i32, 0x3F800000 - 0x3F3504F3))
        k = builder.sub(builder.ashr(ix, ir.Constant(i32, 23)), ir.Constant(i32, 0x7F))
        z = builder.bitcast(builder.add(builder.and_(ix, ir.Constant(i32, 0x007FFFFF)), ir.Constant(i32, 0x3F3504F3)), ir.FloatType())
        return context.make_tuple(builder, signature.return_type, (z, builder.sitofp(k, ir.FloatType())))

    return types.UniTuple(types.float32, 2)(types.float32), codegen


def _copysign(typingctx, magnitude, sign):  # type: ignore[no-untyped-def]
    """|magnitude| with the sign bit of ``sign`` (llvm.copysign, so -0 keeps its sign)."""
    if not (magnitude == sign and magnitude in (types.float32, types.float64)):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        kind = args[0].type
        fn = builder.module.declare_intrinsic("llvm.copysign", [kind], ir.FunctionType(kind, [kind, kind]))
        return builder.call(fn, args)

    return magnitude(magnitude, magnitude), codegen


copysign: Callable[..., Any] = intrinsic(_copysign)
fdiv: Callable[..., Any] = intrinsic(_fdiv)
exp2_scale32: Callable[..., Any] = intrinsic(_exp2_scale32)
log_split32: Callable[..., Any] = intrinsic(_log_split32)


def _ldexp(typingctx, x, k):  # type: ignore[no-untyped-def]
    """x 2^k rounded once (into the subnormals too; inf on overflow), for float64 or float32 ``x`` and int64 ``k`` with
    |k| <= 2000 (float64) or 250 (float32): ``vscalefpd`` on AVX-512, else x 2^(k >> 1) 2^(k - (k >> 1)), whose
    first product is exact and second rounds once (the same result)."""
    if not (x in (types.float64, types.float32) and k == types.int64):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        kind, i64 = args[0].type, ir.IntType(64)
        if SCALEF:
            fn = builder.module.declare_intrinsic("llvm.ldexp", [kind, i64], ir.FunctionType(kind, [kind, i64]))
            return builder.call(fn, args)
        bias, shift, width = (1023, 52, 64) if kind == ir.DoubleType() else (127, 23, 32)
        half = builder.ashr(args[1], ir.Constant(i64, 1))

        def power(e):  # type: ignore[no-untyped-def]
            raw = builder.shl(builder.add(e, ir.Constant(i64, bias)), ir.Constant(i64, shift))
            return builder.bitcast(builder.trunc(raw, ir.IntType(width)) if width == 32 else raw, kind)

        return builder.fmul(builder.fmul(args[0], power(half)), power(builder.sub(args[1], half)))

    return x(x, types.int64), codegen


ldexp: Callable[..., Any] = intrinsic(_ldexp)


# --- non-temporal stores -----------------------------------------------------------------------------

HOST_CPU = llvm.get_host_cpu_name()
"""LLVM's name for this CPU ("icelake-server", "znver5", ...)."""
X86 = llvm.get_process_triple().split("-")[0] in ("x86_64", "i386", "i686")
"""Whether :func:`stream_copy` writes with x86's non-temporal stores (elsewhere it is a plain copy and the fast
backend never asks for it)."""
STREAM_BLOCK = 64
"""Bytes per non-temporal store (one cache line, one 512-bit store or two 256-bit ones)."""


def _stream_copy(typingctx, dst, src):  # type: ignore[no-untyped-def]
    """Copy ``src`` into ``dst`` (1-D contiguous arrays of one dtype and length, ``dst`` 64-byte aligned, a whole
    number of 64-byte lines) with non-temporal stores: each line goes to memory without first being read into the
    cache (a normal store reads the line it writes: a third memory transfer in a streaming loop). Call
    :func:`store_fence` after the last one."""
    if not (isinstance(dst, types.Array) and isinstance(src, types.Array) and dst.dtype == src.dtype
            and dst.ndim == src.ndim == 1):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        line = ir.VectorType(ir.IntType(64), STREAM_BLOCK // 8)
        target = context.make_array(signature.args[0])(context, builder, args[0])
        source = context.make_array(signature.args[1])(context, builder, args[1])
        itemsize = context.get_abi_sizeof(context.get_data_type(signature.args[1].dtype))
        lines = builder.udiv(builder.mul(source.nitems, ir.Constant(ir.IntType(64), itemsize)),
                             ir.Constant(ir.IntType(64), STREAM_BLOCK))
        to = builder.bitcast(target.data, line.as_pointer())
        start = builder.bitcast(source.data, line.as_pointer())
        hint = builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)])
        with cgutils.for_range(builder, lines) as loop:
            value = builder.load(builder.gep(start, [loop.index]), align=1)
            store = builder.store(value, builder.gep(to, [loop.index]), align=STREAM_BLOCK)
            if X86:
                store.set_metadata("nontemporal", hint)
        return context.get_dummy_value()

    return types.none(dst, src), codegen


def _store_fence(typingctx):  # type: ignore[no-untyped-def]
    """Order the non-temporal stores before every later store (x86's ``sfence``: they are weakly ordered, and the
    thread that reads the output next may be another one)."""

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        if X86:
            fn = builder.module.declare_intrinsic("llvm.x86.sse.sfence", fnty=ir.FunctionType(ir.VoidType(), []))
            builder.call(fn, [])
        else:
            builder.fence("seq_cst")
        return context.get_dummy_value()

    return types.none(), codegen


stream_copy: Callable[..., Any] = intrinsic(_stream_copy)
store_fence: Callable[..., Any] = intrinsic(_store_fence)


# --- transposing 8 x 8 blocks ------------------------------------------------------------------------


def _transpose_shuffles(builder, rows):  # type: ignore[no-untyped-def]
    """The columns of the 8 vectors ``rows`` (8 lanes each) as 8 vectors: three rounds of pairwise interleaves,
    LLVM ``shufflevector`` only (``vunpck``/``vpermt2`` on AVX-512; whatever the target has elsewhere)."""
    def pair(x, y, low, high):  # type: ignore[no-untyped-def]
        lanes = ir.VectorType(ir.IntType(32), 8)
        return (builder.shuffle_vector(x, y, ir.Constant(lanes, low)), builder.shuffle_vector(x, y, ir.Constant(lanes, high)))

    rounds = [((0, 8, 2, 10, 4, 12, 6, 14), (1, 9, 3, 11, 5, 13, 7, 15), 1),  # 2 x 2 blocks
              ((0, 1, 8, 9, 4, 5, 12, 13), (2, 3, 10, 11, 6, 7, 14, 15), 2),  # 4 x 4
              ((0, 1, 2, 3, 8, 9, 10, 11), (4, 5, 6, 7, 12, 13, 14, 15), 4)]  # 8 x 8
    for low, high, span in rounds:
        done = list(rows)
        for i in range(8):
            if i & span == 0:
                done[i], done[i + span] = pair(rows[i], rows[i + span], low, high)
        rows = done
    return rows


def _transpose8(typingctx, source, position, stride, target, at, width):  # type: ignore[no-untyped-def]
    """target[at + r * width + c] = source[position + c * stride + r] for r, c < 8: an 8 x 8 block whose columns are
    runs of ``source`` (8 vector loads, 24 shuffles, 8 vector stores) for 1-D arrays of 4- or 8-byte integers."""
    if not (isinstance(source, types.Array) and source == target and source.ndim == 1
            and source.dtype in (types.uint64, types.uint32)):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        src, start, step, dst, first, row = args
        lane = context.get_value_type(signature.args[0].dtype)
        vector = ir.VectorType(lane, 8).as_pointer()
        src_data = context.make_array(signature.args[0])(context, builder, src).data
        dst_data = context.make_array(signature.args[3])(context, builder, dst).data
        rows = []
        for c in range(8):
            at_c = builder.add(start, builder.mul(step, ir.Constant(step.type, c)))
            rows.append(builder.load(builder.bitcast(builder.gep(src_data, [at_c]), vector), align=1))
        for r, column in enumerate(_transpose_shuffles(builder, rows)):
            at_r = builder.add(first, builder.mul(row, ir.Constant(row.type, r)))
            builder.store(column, builder.bitcast(builder.gep(dst_data, [at_r]), vector), align=1)
        return context.get_dummy_value()

    return types.none(source, types.int64, types.int64, target, types.int64, types.int64), codegen


transpose8: Callable[..., Any] = intrinsic(_transpose8)


# --- calling a compiled C function by address -------------------------------------------------------


def _element_pointer(typingctx, array, offset):  # type: ignore[no-untyped-def]
    """A pointer to ``array[offset]`` (``offset`` in elements, not checked): what a C function of
    :func:`call_function` reads or writes."""
    if not isinstance(array, types.Array) or not isinstance(offset, types.Integer):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        return builder.gep(data, [args[1]])

    return types.CPointer(array.dtype)(array, offset), codegen


element_pointer: Callable[..., Any] = intrinsic(_element_pointer)


def _call_function(typingctx, address, *args):  # type: ignore[no-untyped-def]
    """Call the C function at ``address`` (an int64, e.g. a Numba ``cfunc``'s ``.address``) with ``args`` (pointers
    and integers, passed as they are), ignoring any result: one indirect call, so a kernel can run code chosen at run
    time without being compiled again for it."""
    if not isinstance(address, types.Integer):
        return None

    def codegen(context, builder, signature, llargs):  # type: ignore[no-untyped-def]
        values = cgutils.unpack_tuple(builder, llargs[1])
        function_type = ir.FunctionType(ir.VoidType(), [value.type for value in values])
        builder.call(builder.inttoptr(llargs[0], function_type.as_pointer()), values)
        return context.get_dummy_value()

    return types.void(address, types.StarArgTuple.from_types(args)), codegen


call_function: Callable[..., Any] = intrinsic(_call_function)
