"""Runs one fuzz case on the compiled kernels and on the float64 reference, and compares.

Every output buffer handed to the compiled kernel is a slice of a larger allocation whose
margins (1 to 16 elements either side, so the slice is also misaligned) hold a canary bit
pattern; after the call the margins must be untouched, every input must be unchanged, and
every output must match the reference (NaN where the reference has NaN). When the reference
refuses the arguments (ValueError), the compiled kernel must refuse them too. A case whose
float64 reference exceeds 1e20 or overflows (a linear or relu recurrence growing without bound)
is counted as "overflow" and not compared: float32 cannot follow it.
"""

import numpy as np

from fkeras import _C
from fkeras.backend.reference import KERNELS as REF

CANARY = {np.dtype(np.float32): np.uint32(0x7FA5A5A5).view(np.float32),
          np.dtype(np.int64): np.int64(0x5A5A5A5A5A5A5A5A),
          np.dtype(np.int32): np.int32(0x5A5A5A5A), np.dtype(np.int8): np.int8(0x5A)}


class FuzzFailure(AssertionError):
    pass


def guarded(rng, value):
    """(whole allocation, slice): the slice holds `value`, the margins the canary."""
    before, after = (int(v) for v in rng.integers(1, 17, 2))
    whole = np.full(value.size + before + after, CANARY[value.dtype], value.dtype)
    view = whole[before:before + value.size].reshape(value.shape)
    view[...] = value
    return whole, view, (before, after)


def _bits(a):
    return a.view(np.uint8).copy()


def _compare(case, name, got, want):
    got64, want64 = got.astype(np.float64), want.astype(np.float64)
    nan_got, nan_want = np.isnan(got64), np.isnan(want64)
    if not np.array_equal(nan_got, nan_want):
        i = np.argwhere(nan_got != nan_want)[0]
        raise FuzzFailure(f"{case.kernel}: output '{name}' NaN pattern differs at {tuple(i)}: "
                          f"got {got64[tuple(i)]!r}, reference {want64[tuple(i)]!r}")
    finite = ~nan_want
    if not np.array_equal(np.isinf(got64) & finite, np.isinf(want64) & finite):
        raise FuzzFailure(f"{case.kernel}: output '{name}' has infinities where the reference "
                          "has none (or the reverse)")
    ok = finite & ~np.isinf(want64)
    if not ok.any():
        return
    if got.dtype.kind == "i":
        if not np.array_equal(got[ok], want[ok]):
            raise FuzzFailure(f"{case.kernel}: integer output '{name}' differs")
        return
    scale = max(1.0, float(np.abs(want64[ok]).max()))
    err = np.abs(got64 - want64)
    tol = case.tol * scale + case.tol * np.abs(want64)
    bad = ok & (err > tol)
    if bad.any():
        i = tuple(np.argwhere(bad)[0])
        raise FuzzFailure(f"{case.kernel}: output '{name}' differs at {i}: got {got64[i]!r}, "
                          f"reference {want64[i]!r} (tolerance {case.tol} x scale {scale:.3g})")


def _describe(case):
    return ", ".join(f"{k}={v}" for k, v in case.args.items() if not isinstance(v, np.ndarray)
                     and v is not None) + "; shapes " + ", ".join(
        f"{k}{tuple(v.shape)}" for k, v in case.args.items() if isinstance(v, np.ndarray))


def run_case(case, rng):
    """Runs `case` on both devices; raises FuzzFailure (with the arguments) on any mismatch."""
    cpu_args, ref_args, guards, inputs = {}, {}, {}, {}
    for k, v in case.args.items():
        if not isinstance(v, np.ndarray):
            cpu_args[k] = ref_args[k] = v
            continue
        if k in case.outputs or k in case.unchecked:
            guards[k] = guarded(rng, v)
            cpu_args[k] = guards[k][1]
        else:
            cpu_args[k] = v.copy()
            inputs[k] = _bits(cpu_args[k])
        ref_args[k] = v.astype(np.float64) if v.dtype == np.float32 else v.copy()
    try:
        REF[case.kernel](**ref_args)
        ref_error = None
    except (ValueError, ZeroDivisionError, FloatingPointError) as e:
        ref_error = e
    try:
        with np.errstate(all="ignore"):
            getattr(_C, case.kernel)(**cpu_args)
    except ValueError as e:
        if ref_error is None:
            raise FuzzFailure(f"{case.kernel} refused arguments the reference accepts: {e}\n"
                              f"  {_describe(case)}") from e
        return "refused"
    try:
        for k, (whole, view, (before, after)) in guards.items():
            if not (_bits(whole[:before]) == _bits(np.full(before, CANARY[whole.dtype],
                                                           whole.dtype))).all() or \
               not (_bits(whole[len(whole) - after:]) == _bits(
                   np.full(after, CANARY[whole.dtype], whole.dtype))).all():
                raise FuzzFailure(f"{case.kernel}: wrote outside output '{k}' (canary changed)")
        for k, bits in inputs.items():
            if not np.array_equal(_bits(cpu_args[k]), bits):
                raise FuzzFailure(f"{case.kernel}: modified its input '{k}'")
        if ref_error is not None:
            raise FuzzFailure(f"{case.kernel} accepted arguments the reference refuses "
                              f"({ref_error})")
        if any(np.isinf(ref_args[k]).any() or
               np.abs(ref_args[k][np.isfinite(ref_args[k])]).max(initial=0) > 1e20
               for k in case.outputs if k not in getattr(case, "infinite_ok", ())):
            return "overflow"  # an unbounded recurrence: float32 cannot follow it
        for k in case.outputs:
            _compare(case, k, cpu_args[k], ref_args[k])
    except FuzzFailure as e:
        raise FuzzFailure(f"{e}\n  {_describe(case)}") from None
    return "ok"
