"""Layer 1: four float64 lanes as one value in compiled code (LLVM's <4 x double>: one AVX register, two SSE ones).

numba vectorizes a loop by itself, but not a register tile: a kernel whose inner loop updates a few rows by a few
columns at once gets its accumulators spilled or left scalar (blocked Cholesky variants written on scalars measured
1.4-1.8x slower than dense.cholesky_into's column-pair Crout; dense.cholesky_upper_into, written with these, takes
0.67-0.71x its time with the solves; dense.rank_update_lower 0.50-0.58x the scalar rows' it replaced).  With these
the kernel names its vectors: ``load(F, k)`` and ``store(F, k, v)`` read and write F[k:k + 4] of a C-contiguous
float64 array (any shape, k a flat index; unaligned, unchecked: the caller's indices are its layout's own),
``splat(x)`` is x in every lane, ``lanes(a, b, c, d)`` builds one, ``lane(v, i)`` reads one, ``fnma(a, b, c)`` =
c - a b (fused), ``mul(a, b)``.
"""
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, models, register_model

_V4 = ir.VectorType(ir.DoubleType(), 4)
_I32 = ir.IntType(32)


class Vec4(types.Type):
    """The numba type of four float64 lanes."""

    def __init__(self):
        super().__init__(name="vec4")


vec4 = Vec4()


@register_model(Vec4)
class _Vec4Model(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, _V4)


def _address(context, builder, array_type, array, k):
    data = context.make_array(array_type)(context, builder, array).data
    return builder.bitcast(builder.gep(data, [k]), _V4.as_pointer())


@intrinsic
def load(typingctx, F, k):
    """F[k:k + 4] as one value."""
    def codegen(context, builder, sig, args):
        return builder.load(_address(context, builder, sig.args[0], args[0], args[1]), align=8)
    return vec4(F, k), codegen


@intrinsic
def store(typingctx, F, k, v):
    """F[k:k + 4] <- v."""
    def codegen(context, builder, sig, args):
        builder.store(args[2], _address(context, builder, sig.args[0], args[0], args[1]), align=8)
        return context.get_dummy_value()
    return types.none(F, k, vec4), codegen


@intrinsic
def splat(typingctx, x):
    """x in every lane."""
    def codegen(context, builder, sig, args):
        v = builder.insert_element(ir.Constant(_V4, ir.Undefined), args[0], ir.Constant(_I32, 0))
        return builder.shuffle_vector(v, ir.Constant(_V4, ir.Undefined), ir.Constant(ir.VectorType(_I32, 4), [0] * 4))
    return vec4(types.float64), codegen


@intrinsic
def lanes(typingctx, a, b, c, d):
    """(a, b, c, d) as one value."""
    def codegen(context, builder, sig, args):
        v = ir.Constant(_V4, ir.Undefined)
        for i, x in enumerate(args):
            v = builder.insert_element(v, x, ir.Constant(_I32, i))
        return v
    return vec4(types.float64, types.float64, types.float64, types.float64), codegen


@intrinsic
def lane(typingctx, v, i):
    """Lane i of v."""
    def codegen(context, builder, sig, args):
        return builder.extract_element(args[0], args[1])
    return types.float64(vec4, i), codegen


@intrinsic
def fnma(typingctx, a, b, c):
    """c - a b, each lane a fused multiply-add where the machine has one (llvm.fmuladd, as fastmath "contract")."""
    def codegen(context, builder, sig, args):
        module = builder.module
        try:
            fma = module.get_global("llvm.fmuladd.v4f64")
        except KeyError:
            fma = ir.Function(module, ir.FunctionType(_V4, [_V4] * 3), "llvm.fmuladd.v4f64")
        return builder.call(fma, [builder.fneg(args[0]), args[1], args[2]])
    return vec4(vec4, vec4, vec4), codegen


@intrinsic
def mul(typingctx, a, b):
    """a b, lane by lane."""
    def codegen(context, builder, sig, args):
        return builder.fmul(args[0], args[1])
    return vec4(vec4, vec4), codegen
