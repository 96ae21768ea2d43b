"""The string hashes TensorFlow's ops use, which Keras 3.15's Hashing and HashedCrossing call on
every backend: written from the published algorithms, on Python ints masked to 64 bits.

- `fingerprint64(data)`: FarmHash's Fingerprint64 (the `farmhashna` 64-bit hash, a CityHash
  descendant by Geoff Pike), what `tf.strings.to_hash_bucket_fast` and the crossing op use.
- `siphash24(key0, key1, data)`: SipHash-2-4 (Aumasson and Bernstein) with the 128-bit key as two
  little-endian words, what `tf.strings.to_hash_bucket_strong` uses.
- `fingerprint_cat64(fp1, fp2)`: TensorFlow's combination of two fingerprints (the crossing op
  folds each feature's fingerprint into a running one, starting from its hash key).
"""

import struct

_MASK = (1 << 64) - 1
_K0 = 0xC3A5C85C97CB3127
_K1 = 0xB492B66FBE98F273
_K2 = 0x9AE16A3B2F90404F


def _rot(v, shift):
    return v if shift == 0 else ((v >> shift) | (v << (64 - shift))) & _MASK


def _shift_mix(v):
    return v ^ (v >> 47)


def _u64(data, at):
    return struct.unpack_from("<Q", data, at)[0]


def _u32(data, at):
    return struct.unpack_from("<I", data, at)[0]


def _hash16(u, v, mul):
    a = ((u ^ v) * mul) & _MASK
    a ^= a >> 47
    b = ((v ^ a) * mul) & _MASK
    b ^= b >> 47
    return (b * mul) & _MASK


def _len_0_to_16(s, n):
    if n >= 8:
        mul = _K2 + n * 2
        a = (_u64(s, 0) + _K2) & _MASK
        b = _u64(s, n - 8)
        c = (_rot(b, 37) * mul + a) & _MASK
        d = ((_rot(a, 25) + b) * mul) & _MASK
        return _hash16(c, d, mul)
    if n >= 4:
        mul = _K2 + n * 2
        return _hash16((n + (_u32(s, 0) << 3)) & _MASK, _u32(s, n - 4), mul)
    if n > 0:
        y = s[0] + (s[n >> 1] << 8)
        z = n + (s[n - 1] << 2)
        return (_shift_mix(((y * _K2) ^ (z * _K0)) & _MASK) * _K2) & _MASK
    return _K2


def _len_17_to_32(s, n):
    mul = _K2 + n * 2
    a = (_u64(s, 0) * _K1) & _MASK
    b = _u64(s, 8)
    c = (_u64(s, n - 8) * mul) & _MASK
    d = (_u64(s, n - 16) * _K2) & _MASK
    return _hash16((_rot((a + b) & _MASK, 43) + _rot(c, 30) + d) & _MASK,
                   (a + _rot((b + _K2) & _MASK, 18) + c) & _MASK, mul)


def _len_33_to_64(s, n):
    mul = _K2 + n * 2
    a = (_u64(s, 0) * _K2) & _MASK
    b = _u64(s, 8)
    c = (_u64(s, n - 8) * mul) & _MASK
    d = (_u64(s, n - 16) * _K2) & _MASK
    y = (_rot((a + b) & _MASK, 43) + _rot(c, 30) + d) & _MASK
    z = _hash16(y, (a + _rot((b + _K2) & _MASK, 18) + c) & _MASK, mul)
    e = (_u64(s, 16) * mul) & _MASK
    f = _u64(s, 24)
    g = ((y + _u64(s, n - 32)) * mul) & _MASK
    h = ((z + _u64(s, n - 24)) * mul) & _MASK
    return _hash16((_rot((e + f) & _MASK, 43) + _rot(g, 30) + h) & _MASK,
                   (e + _rot((f + a) & _MASK, 18) + g) & _MASK, mul)


def _weak32(s, at, a, b):
    """(a', b') mixing the 32 bytes at `at` with seeds a and b."""
    w, x, y, z = (_u64(s, at + 8 * i) for i in range(4))
    a = (a + w) & _MASK
    b = _rot((b + a + z) & _MASK, 21)
    c = a
    a = (a + x + y) & _MASK
    b = (b + _rot(a, 44)) & _MASK
    return (a + z) & _MASK, (b + c) & _MASK


def _round(s, at, x, y, z, v, w, mul, last):
    """One 64-byte block of the long-input loop; `last` applies the final block's extras."""
    x = (_rot((x + y + v[0] + _u64(s, at + 8)) & _MASK, 37) * mul) & _MASK
    y = (_rot((y + v[1] + _u64(s, at + 48)) & _MASK, 42) * mul) & _MASK
    x ^= (w[1] * 9) & _MASK if last else w[1]
    y = (y + (v[0] * 9 if last else v[0]) + _u64(s, at + 40)) & _MASK
    z = (_rot((z + w[0]) & _MASK, 33) * mul) & _MASK
    v = _weak32(s, at, (v[1] * mul) & _MASK, (x + w[0]) & _MASK)
    w = _weak32(s, at + 32, (z + w[1]) & _MASK, (y + _u64(s, at + 16)) & _MASK)
    return z, y, x, v, w   # x and z trade places after each block


def fingerprint64(data):
    """FarmHash Fingerprint64 of `data` (bytes) as an unsigned 64-bit int."""
    s, n = bytes(data), len(data)
    if n <= 16:
        return _len_0_to_16(s, n)
    if n <= 32:
        return _len_17_to_32(s, n)
    if n <= 64:
        return _len_33_to_64(s, n)
    seed = 81
    y = (seed * _K1 + 113) & _MASK
    z = (_shift_mix((y * _K2 + 113) & _MASK) * _K2) & _MASK
    x = (seed * _K2 + _u64(s, 0)) & _MASK
    v, w = (0, 0), (0, 0)
    end = ((n - 1) // 64) * 64
    for at in range(0, end, 64):
        x, y, z, v, w = _round(s, at, x, y, z, v, w, _K1, False)
    mul = _K1 + ((z & 0xFF) << 1)
    at = end + ((n - 1) & 63) - 63
    w = ((w[0] + ((n - 1) & 63)) & _MASK, w[1])
    v = ((v[0] + w[0]) & _MASK, v[1])
    w = ((w[0] + v[0]) & _MASK, w[1])
    x, y, z, v, w = _round(s, at, x, y, z, v, w, mul, True)
    return _hash16((_hash16(v[0], w[0], mul) + _shift_mix(y) * _K0 + z) & _MASK,
                   (_hash16(v[1], w[1], mul) + x) & _MASK, mul)


def _sip_round(v0, v1, v2, v3):
    v0 = (v0 + v1) & _MASK
    v1 = _rotl(v1, 13) ^ v0
    v0 = _rotl(v0, 32)
    v2 = (v2 + v3) & _MASK
    v3 = _rotl(v3, 16) ^ v2
    v0 = (v0 + v3) & _MASK
    v3 = _rotl(v3, 21) ^ v0
    v2 = (v2 + v1) & _MASK
    v1 = _rotl(v1, 17) ^ v2
    v2 = _rotl(v2, 32)
    return v0, v1, v2, v3


def _rotl(v, shift):
    return ((v << shift) | (v >> (64 - shift))) & _MASK


def siphash24(key0, key1, data):
    """SipHash-2-4 of `data` (bytes) under the key (key0, key1), unsigned 64-bit."""
    data = bytes(data)
    v0 = key0 ^ 0x736F6D6570736575
    v1 = key1 ^ 0x646F72616E646F6D
    v2 = key0 ^ 0x6C7967656E657261
    v3 = key1 ^ 0x7465646279746573
    n = len(data)
    tail = data[n - n % 8:] + bytes(7 - n % 8) + bytes([n & 0xFF])
    blocks = data[:n - n % 8] + tail
    for at in range(0, len(blocks), 8):
        m = _u64(blocks, at)
        v3 ^= m
        for _ in range(2):
            v0, v1, v2, v3 = _sip_round(v0, v1, v2, v3)
        v0 ^= m
    v2 ^= 0xFF
    for _ in range(4):
        v0, v1, v2, v3 = _sip_round(v0, v1, v2, v3)
    return v0 ^ v1 ^ v2 ^ v3


def fingerprint_cat64(fp1, fp2):
    """TensorFlow's FingerprintCat64: a fingerprint of the pair (fp1, fp2)."""
    mul = 0xC6A4A7935BD1E995
    result = fp1 ^ mul
    result ^= (_shift_mix((fp2 * mul) & _MASK) * mul) & _MASK
    result = (result * mul) & _MASK
    result = (_shift_mix(result) * mul) & _MASK
    return _shift_mix(result)
