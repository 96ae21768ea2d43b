"""RGB <-> HSV as two ops (one NumPy pass forward, the analytic gradient backward), Keras's
formulas (dm_pix's; values in [0, 1], channel axis `axis`).

rgb_to_hsv: v = max(r, g, b), m = min(r, g, b), d = v - m; s = d / v (0 where v = 0);
h = (g - b) / 6d where v == r, else (b - r) / 6d + 1/3 where v == g, else (r - g) / 6d + 2/3,
plus 1 where negative, 0 where d = 0; inputs below float eps in magnitude count as 0 (and get
no gradient). The max/min pass their gradient to the first channel reaching them (r, g, b).
hsv_to_rgb: dh = (h mod 1) * 6, c_k = clip(+-|dh - a_k| + b_k, 0, 1) (k = r, g, b),
out_k = v * (1 - s + s c_k); the clip passes no gradient outside (0, 1).
"""

import numpy as np

from fkeras.ops import shape_utils as su
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import Op, apply


def _first_arg(planes, target):
    """One-hot (3, ...) of the first plane equal to target."""
    hit = np.zeros((3,) + target.shape, bool)
    free = np.ones(target.shape, bool)
    for k in range(3):
        hit[k] = free & (planes[k] == target)
        free &= ~hit[k]
    return hit


class RGBToHSV(Op):
    name = "rgb_to_hsv"

    def output_spec(self, x, axis=-1):
        return su.shape_of(x)

    def forward(self, dev, x, axis=-1):
        eps = np.finfo(x.dtype).eps
        kept = np.abs(x) >= eps
        p = np.moveaxis(np.where(kept, x, 0).astype(x.dtype), axis, 0)
        r, g, b = p
        v = np.maximum(np.maximum(r, g), b)
        m = np.minimum(np.minimum(r, g), b)
        d = v - m
        safe_v = np.where(v > 0, v, 1).astype(x.dtype)
        safe_d = np.where(d > 0, d, 1).astype(x.dtype)
        s = np.where(v > 0, d / safe_v, 0)
        norm = 1 / (6 * safe_d)
        case_r, case_g = v == r, (v == g) & (v != r)
        h = np.where(case_g, norm * (b - r) + 2.0 / 6.0, norm * (r - g) + 4.0 / 6.0)
        h = np.where(case_r, norm * (g - b), h)
        h = np.where(d > 0, h, 0) + (h < 0)
        y = np.moveaxis(np.stack([h, s, v]).astype(x.dtype), 0, axis)
        return np.ascontiguousarray(y), (p, v, m, d, safe_v, norm, case_r, case_g,
                                         np.moveaxis(kept, axis, 0))

    def backward(self, dev, saved, g, needs, axis=-1):
        p, v, m, d, safe_v, norm, case_r, case_g, kept = saved
        r, gr, b = p
        gh, gs, gv = np.moveaxis(g, axis, 0)
        vmax, vmin = _first_arg(p, v), _first_arg(p, m)
        grad = vmax * gv  # value
        # saturation: d / v with d = v - m
        ds = np.where(v > 0, gs / safe_v, 0)
        dv_s = np.where(v > 0, -gs * d / (safe_v * safe_v), 0)
        grad = grad + vmax * (ds + dv_s) - vmin * ds
        # hue: num / (6 d) (+ const); num from the case's channels
        case_b = ~case_r & ~case_g
        num = np.where(case_r, gr - b, np.where(case_g, b - r, r - gr))
        ghd = np.where(d > 0, gh, 0)
        dnum = ghd * norm
        dd = -ghd * num * norm / np.where(d > 0, d, 1)
        sel = np.stack([np.where(case_g, -dnum, 0) + np.where(case_b, dnum, 0),
                        np.where(case_r, dnum, 0) - np.where(case_b, dnum, 0),
                        -np.where(case_r, dnum, 0) + np.where(case_g, dnum, 0)])
        grad = grad + sel + vmax * dd - vmin * dd
        grad = np.where(kept, grad, 0)
        return (np.ascontiguousarray(np.moveaxis(grad, 0, axis), dtype=g.dtype),)


_CENTRES = ((3.0, 1.0, -1.0), (2.0, -1.0, 2.0), (4.0, -1.0, 2.0))  # (a_k, sign, b_k)


class HSVToRGB(Op):
    name = "hsv_to_rgb"

    def output_spec(self, x, axis=-1):
        return su.shape_of(x)

    def forward(self, dev, x, axis=-1):
        h, s, v = np.moveaxis(x, axis, 0)
        dh = np.mod(h, 1.0) * 6.0
        pre = [sign * np.abs(dh - a) + c for a, sign, c in _CENTRES]
        cs = [np.clip(t, 0.0, 1.0) for t in pre]
        out = np.stack([v * (1.0 - s + s * c) for c in cs]).astype(x.dtype)
        return np.ascontiguousarray(np.moveaxis(out, 0, axis)), (h, s, v, dh, pre, cs)

    def backward(self, dev, saved, g, needs, axis=-1):
        h, s, v, dh, pre, cs = saved
        gk = np.moveaxis(g, axis, 0)
        gh = np.zeros_like(h)
        gs = np.zeros_like(s)
        gv = np.zeros_like(v)
        for k, ((a, sign, _), t, c) in enumerate(zip(_CENTRES, pre, cs)):
            gv = gv + gk[k] * (1.0 - s + s * c)
            gs = gs + gk[k] * v * (c - 1.0)
            inside = (t > 0.0) & (t < 1.0)
            gh = gh + np.where(inside, gk[k] * v * s * sign * np.sign(dh - a) * 6.0, 0.0)
        grad = np.stack([gh, gs, gv])
        return (np.ascontiguousarray(np.moveaxis(grad, 0, axis), dtype=g.dtype),)


def rgb_to_hsv_op(x, axis):
    return apply(_R["rgb_to_hsv"], x, axis=int(axis))


def hsv_to_rgb_op(x, axis):
    return apply(_R["hsv_to_rgb"], x, axis=int(axis))
