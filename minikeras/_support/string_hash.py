"""The two string hashes of Keras's Hashing layer, in pure Python.

Keras (through TensorFlow's ``strings.to_hash_bucket_fast`` and
``to_hash_bucket_strong``) buckets a string by

- ``fingerprint64``: FarmHash's Fingerprint64 (the ``farmhashna`` 64-bit
  hash, seedless), when no salt is given;
- ``siphash``: SipHash-2-4 keyed by two 64-bit words, when a salt is given.

A bucket is the hash, read as an unsigned 64-bit integer, modulo the number
of buckets. Both are written from the algorithms' published descriptions on
Python ints masked to 64 bits, so minikeras needs no compiled dependency
and gives Keras's buckets on every platform (byte order is fixed:
little-endian reads, as both algorithms define them). ``cross_hash`` is
TensorFlow's ``sparse.cross_hashed`` of one value per feature (Keras's
HashedCrossing): the features' fingerprints (an integer stands for
itself) folded by ``FingerprintCat64``. The tests compare them with
TensorFlow on strings of every length class (0-16, 17-32, 33-64
and the 64-byte loop) and with the salts Keras users pass.
"""
import struct

__all__ = ["fingerprint64", "siphash", "hash_bucket", "fingerprint_cat64", "cross_hash"]

_MASK = (1 << 64) - 1
_K0 = 0xC3A5C85C97CB3127
_K1 = 0xB492B66FBE98F273
_K2 = 0x9AE16A3B2F90404F


def _fetch64(data, offset):
    return struct.unpack_from("<Q", data, offset)[0]


def _fetch32(data, offset):
    return struct.unpack_from("<I", data, offset)[0]


def _rotate(value, shift):
    """Rotate right (FarmHash's ``Rotate``)."""
    return ((value >> shift) | (value << (64 - shift))) & _MASK if shift else value


def _shift_mix(value):
    return value ^ (value >> 47)


def _hash_len16(u, v, mul):
    a = ((u ^ v) * mul) & _MASK
    a ^= a >> 47
    b = ((v ^ a) * mul) & _MASK
    b ^= b >> 47
    return (b * mul) & _MASK


def _hash_len0to16(data, length):
    if length >= 8:
        mul = _K2 + length * 2
        a = (_fetch64(data, 0) + _K2) & _MASK
        b = _fetch64(data, length - 8)
        c = (_rotate(b, 37) * mul + a) & _MASK
        d = ((_rotate(a, 25) + b) * mul) & _MASK
        return _hash_len16(c, d, mul)
    if length >= 4:
        mul = _K2 + length * 2
        a = _fetch32(data, 0)
        return _hash_len16(length + (a << 3), _fetch32(data, length - 4), mul)
    if length > 0:
        y = data[0] + (data[length >> 1] << 8)
        z = length + (data[length - 1] << 2)
        return (_shift_mix(((y * _K2) ^ (z * _K0)) & _MASK) * _K2) & _MASK
    return _K2


def _hash_len17to32(data, length):
    mul = _K2 + length * 2
    a = (_fetch64(data, 0) * _K1) & _MASK
    b = _fetch64(data, 8)
    c = (_fetch64(data, length - 8) * mul) & _MASK
    d = (_fetch64(data, length - 16) * _K2) & _MASK
    return _hash_len16((_rotate((a + b) & _MASK, 43) + _rotate(c, 30) + d) & _MASK,
                       (a + _rotate((b + _K2) & _MASK, 18) + c) & _MASK, mul)


def _hash_len33to64(data, length):
    mul = _K2 + length * 2
    a = (_fetch64(data, 0) * _K2) & _MASK
    b = _fetch64(data, 8)
    c = (_fetch64(data, length - 8) * mul) & _MASK
    d = (_fetch64(data, length - 16) * _K2) & _MASK
    y = (_rotate((a + b) & _MASK, 43) + _rotate(c, 30) + d) & _MASK
    z = _hash_len16(y, (a + _rotate((b + _K2) & _MASK, 18) + c) & _MASK, mul)
    e = (_fetch64(data, 16) * mul) & _MASK
    f = _fetch64(data, 24)
    g = ((y + _fetch64(data, length - 32)) * mul) & _MASK
    h = ((z + _fetch64(data, length - 24)) * mul) & _MASK
    return _hash_len16((_rotate((e + f) & _MASK, 43) + _rotate(g, 30) + h) & _MASK,
                       (e + _rotate((f + a) & _MASK, 18) + g) & _MASK, mul)


def _weak_hash_len32_with_seeds(data, offset, a, b):
    w, x = _fetch64(data, offset), _fetch64(data, offset + 8)
    y, z = _fetch64(data, offset + 16), _fetch64(data, offset + 24)
    a = (a + w) & _MASK
    b = _rotate((b + a + z) & _MASK, 21)
    c = a
    a = (a + x + y) & _MASK
    b = (b + _rotate(a, 44)) & _MASK
    return (a + z) & _MASK, (b + c) & _MASK


def fingerprint64(data):
    """FarmHash Fingerprint64 of ``data`` (bytes), an int in [0, 2**64)."""
    length = len(data)
    if length <= 16:
        return _hash_len0to16(data, length)
    if length <= 32:
        return _hash_len17to32(data, length)
    if length <= 64:
        return _hash_len33to64(data, length)
    seed = 81
    x = seed
    y = (seed * _K1 + 113) & _MASK
    z = (_shift_mix((y * _K2 + 113) & _MASK) * _K2) & _MASK
    v, w = (0, 0), (0, 0)
    x = (x * _K2 + _fetch64(data, 0)) & _MASK
    end = ((length - 1) // 64) * 64
    last64 = end + ((length - 1) & 63) - 63
    offset = 0
    while True:  # every whole 64-byte block but the last
        x = (_rotate((x + y + v[0] + _fetch64(data, offset + 8)) & _MASK, 37) * _K1) & _MASK
        y = (_rotate((y + v[1] + _fetch64(data, offset + 48)) & _MASK, 42) * _K1) & _MASK
        x ^= w[1]
        y = (y + v[0] + _fetch64(data, offset + 40)) & _MASK
        z = (_rotate((z + w[0]) & _MASK, 33) * _K1) & _MASK
        v = _weak_hash_len32_with_seeds(data, offset, (v[1] * _K1) & _MASK, (x + w[0]) & _MASK)
        w = _weak_hash_len32_with_seeds(data, offset + 32, (z + w[1]) & _MASK, (y + _fetch64(data, offset + 16)) & _MASK)
        z, x = x, z
        offset += 64
        if offset == end:
            break
    mul = _K1 + ((z & 0xFF) << 1)
    offset = last64
    w = ((w[0] + ((length - 1) & 63)) & _MASK, w[1])
    v = ((v[0] + w[0]) & _MASK, v[1])
    w = ((w[0] + v[0]) & _MASK, w[1])
    x = (_rotate((x + y + v[0] + _fetch64(data, offset + 8)) & _MASK, 37) * mul) & _MASK
    y = (_rotate((y + v[1] + _fetch64(data, offset + 48)) & _MASK, 42) * mul) & _MASK
    x ^= (w[1] * 9) & _MASK
    y = (y + v[0] * 9 + _fetch64(data, offset + 40)) & _MASK
    z = (_rotate((z + w[0]) & _MASK, 33) * mul) & _MASK
    v = _weak_hash_len32_with_seeds(data, offset, (v[1] * mul) & _MASK, (x + w[0]) & _MASK)
    w = _weak_hash_len32_with_seeds(data, offset + 32, (z + w[1]) & _MASK, (y + _fetch64(data, offset + 16)) & _MASK)
    z, x = x, z
    return _hash_len16((_hash_len16(v[0], w[0], mul) + _shift_mix(y) * _K0 + z) & _MASK,
                       (_hash_len16(v[1], w[1], mul) + x) & _MASK, mul)


def _rotate_left(value, shift):
    return ((value << shift) | (value >> (64 - shift))) & _MASK


def _sip_round(v0, v1, v2, v3):
    v0 = (v0 + v1) & _MASK
    v1 = _rotate_left(v1, 13) ^ v0
    v0 = _rotate_left(v0, 32)
    v2 = (v2 + v3) & _MASK
    v3 = _rotate_left(v3, 16) ^ v2
    v0 = (v0 + v3) & _MASK
    v3 = _rotate_left(v3, 21) ^ v0
    v2 = (v2 + v1) & _MASK
    v1 = _rotate_left(v1, 17) ^ v2
    v2 = _rotate_left(v2, 32)
    return v0, v1, v2, v3


def siphash(key, data):
    """SipHash-2-4 of ``data`` (bytes) under ``key`` (two ints < 2**64), an int in [0, 2**64)."""
    k0, k1 = (int(part) & _MASK for part in key)
    v0, v1 = k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D
    v2, v3 = k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573
    whole = len(data) - len(data) % 8
    final = int.from_bytes(data[whole:], "little") | ((len(data) & 0xFF) << 56)
    words = [_fetch64(data, offset) for offset in range(0, whole, 8)] + [final]
    for word in words:
        v3 ^= word
        v0, v1, v2, v3 = _sip_round(*_sip_round(v0, v1, v2, v3))
        v0 ^= word
    v2 ^= 0xFF
    for _ in range(4):
        v0, v1, v2, v3 = _sip_round(v0, v1, v2, v3)
    return v0 ^ v1 ^ v2 ^ v3


def hash_bucket(data, num_buckets, key=None):
    """TensorFlow's ``to_hash_bucket_fast`` (no key) or ``to_hash_bucket_strong`` (key) of one string."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")  # any str hashes, a lone surrogate too
    value = fingerprint64(data) if key is None else siphash(key, data)
    return value % num_buckets


_CAT_MUL = 0xC6A4A7935BD1E995
#: tf.sparse.cross_hashed's default hash key.
CROSS_HASH_KEY = 0xDECAFCAFFE


def fingerprint_cat64(first, second):
    """TensorFlow's ``FingerprintCat64``: two 64-bit fingerprints combined, order-sensitive."""
    result = first ^ _CAT_MUL
    result ^= (_shift_mix((second * _CAT_MUL) & _MASK) * _CAT_MUL) & _MASK
    result = (result * _CAT_MUL) & _MASK
    result = (_shift_mix(result) * _CAT_MUL) & _MASK
    return _shift_mix(result)


def cross_hash(features, num_buckets, key=CROSS_HASH_KEY):
    """The bucket of one cross of ``features`` (ints or strings/bytes), as
    ``tf.sparse.cross_hashed``: strings by Fingerprint64, ints as their
    64-bit two's complement, folded from ``key``; modulo ``num_buckets``
    (or the largest int64 when it is 0)."""
    hashed = key
    for feature in features:
        if isinstance(feature, str):
            feature = feature.encode("utf-8", "surrogatepass")
        value = fingerprint64(feature) if isinstance(feature, bytes) else int(feature) & _MASK
        hashed = fingerprint_cat64(hashed, value)
    return hashed % (num_buckets if num_buckets > 0 else (1 << 63) - 1)
