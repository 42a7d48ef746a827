"""Quantized dtype policies: a layer that stores its kernel quantized.

Keras 3 names them ``"<mode>_from_<source policy>"``: ``"int8_from_float32"``
is a layer quantized to int8 (int8 kernel with float scales) that otherwise
computes as ``"float32"`` would; ``"float8_from_mixed_bfloat16"`` trains
with float8 quantize-dequantize around its matmul, computing in bfloat16.
The compute and variable dtypes are the source policy's. The policy only
records the mode: the layer's ``quantize(mode)`` (layers/quantization.py)
does the work, and a layer built under such a policy (a file being loaded)
creates the quantized variables directly.

int4 (``"int4/<block_size>_from_..."``), GPTQ and AWQ policies parse and
serialize as Keras's, so that their files' configs read; minikeras's
layers quantize to int8, int4 and float8 (GPTQ and AWQ need a calibration
dataset and are not supported; see README).
"""
from minikeras.dtype_policies.dtype_policy import DTypePolicy, _parse_name, dtype_policy

__all__ = ["QUANTIZATION_MODES", "QuantizedDTypePolicy", "QuantizedFloat8DTypePolicy", "Int4DTypePolicy",
           "GPTQDTypePolicy", "AWQDTypePolicy", "quantized_policy_from_name"]

#: Keras 3.15's quantization modes, in its order (its error messages list them so).
QUANTIZATION_MODES = ("int8", "float8", "int4", "gptq", "awq")


def check_mode(mode, compute_dtype=None):
    """Raise Keras's ValueError for a mode it does not know, or int8 over float16."""
    if mode not in QUANTIZATION_MODES:
        raise ValueError(f"Invalid quantization mode. Expected one of {QUANTIZATION_MODES}. Received: mode={mode}")
    if compute_dtype == "float16" and mode == "int8":
        raise ValueError(f"Quantization mode='{mode}' doesn't work well with compute_dtype='float16'.")


class QuantizedDTypePolicy(DTypePolicy):
    """A policy whose layers hold quantized weights (``keras.dtype_policies.QuantizedDTypePolicy``).

    Args:
        mode: ``"int8"``, ``"float8"``, ``"int4"`` (the modes Keras knows:
            also ``"gptq"``, ``"awq"``).
        source_name: the policy the layer computes under (default: the
            global policy's name), e.g. ``"float32"`` or ``"mixed_bfloat16"``.

    Raises:
        ValueError: an unknown mode, or int8 over a float16 compute dtype
            (Keras's refusal: int8 scales overflow float16).

    Example:
        >>> policy = QuantizedDTypePolicy("int8", "mixed_bfloat16")
        >>> policy.name, policy.compute_dtype, policy.quantization_mode
        ('int8_from_mixed_bfloat16', 'bfloat16', 'int8')
    """

    def __init__(self, mode, source_name=None):
        if source_name is None:
            source_name = dtype_policy().name
        self._compute_dtype, self._variable_dtype = _parse_name(source_name)
        check_mode(mode, self._compute_dtype)
        self._name = f"{mode}_from_{source_name}"
        self._source_name = source_name
        self._quantization_mode = mode

    @property
    def quantization_mode(self):
        """The mode (``"int8"``, ``"float8"``, ...)."""
        return self._quantization_mode

    @property
    def source_name(self):
        """The name of the policy the layer computes under."""
        return self._source_name

    def get_config(self):
        return {"mode": self._quantization_mode, "source_name": self._source_name}

    def __repr__(self):
        return f'<{type(self).__name__} "{self._name}">'

    def __eq__(self, other):
        return (type(other) is type(self) and self._name == other._name
                and self._quantization_mode == other._quantization_mode
                and self._source_name == other._source_name)

    def __hash__(self):
        return hash((type(self).__name__, self._name))


class QuantizedFloat8DTypePolicy(QuantizedDTypePolicy):
    """The float8 policy (``keras.dtype_policies.QuantizedFloat8DTypePolicy``):
    also sets the length of the amax histories the layer keeps for its
    scales (Keras's delayed scaling, default 1024 steps).

    Args:
        mode: ``"float8"``.
        source_name: as :class:`QuantizedDTypePolicy`.
        amax_history_length: an int.

    Raises:
        TypeError: ``amax_history_length`` is not an int.
    """

    default_amax_history_length = 1024

    def __init__(self, mode, source_name=None, amax_history_length=1024):
        super().__init__(mode=mode, source_name=source_name)
        if isinstance(amax_history_length, bool) or not isinstance(amax_history_length, int):
            raise TypeError(f"`amax_history_length` must be an integer. Received: "
                            f"amax_history_length={amax_history_length}")
        self._amax_history_length = amax_history_length

    @property
    def amax_history_length(self):
        """How many steps of absolute maxima the scales are computed from."""
        return self._amax_history_length

    def get_config(self):
        return {**super().get_config(), "amax_history_length": self._amax_history_length}

    def __eq__(self, other):
        return super().__eq__(other) and self._amax_history_length == other._amax_history_length

    def __hash__(self):
        return super().__hash__()


def _split_mode(mode, kind, fields, expected):
    """The int fields of ``"<kind>/<a>[/<b>]"``, with Keras's errors."""
    parts = mode.split("/") if isinstance(mode, str) else []
    if len(parts) != fields + 1 or parts[0] != kind:
        raise ValueError(f"Invalid mode for {expected[0]}. Expected format {expected[1]}, but got '{mode}'.")
    try:
        return [int(part) for part in parts[1:]]
    except ValueError:
        names = " and ".join(expected[2])
        raise ValueError(f"Invalid mode for {expected[0]}. {names} must be {'integers' if fields > 1 else 'an integer'}"
                         f". Expected format {expected[1]}, but got '{mode}'.") from None


class Int4DTypePolicy(QuantizedDTypePolicy):
    """int4 with its block size (``keras.dtype_policies.Int4DTypePolicy``):
    mode ``"int4/<block_size>"``, -1 for one scale per output channel, a
    positive size for groups of that many input rows (with zero points).

    Example:
        >>> Int4DTypePolicy("int4/128", "float32").block_size
        128
    """

    def __init__(self, mode, source_name=None):
        (block_size,) = _split_mode(mode, "int4", 1, ("Int4DTypePolicy", "'int4/<block_size>'", ["<block_size>"]))
        if block_size < -1 or block_size == 0:
            raise ValueError("Invalid block_size in mode. Supported values are -1 (per-channel) or a positive integer "
                             f"(sub-channel), but got {block_size} from '{mode}'.")
        super().__init__(mode="int4", source_name=source_name)
        self._name = f"{mode}_from_{self._source_name}"
        self.mode = "int4"
        self.block_size = block_size

    def get_config(self):
        return {**super().get_config(), "mode": f"int4/{self.block_size}"}

    def __eq__(self, other):
        return super().__eq__(other) and self.block_size == other.block_size

    def __hash__(self):
        return super().__hash__()


class _BitsAndGroupPolicy(QuantizedDTypePolicy):
    """``"<kind>/<weight_bits>/<group_size>"`` policies (GPTQ, AWQ)."""

    _kind = None
    _bits = ()

    def __init__(self, mode, source_name=None):
        name = type(self).__name__
        weight_bits, group_size = _split_mode(mode, self._kind, 2, (
            name, f"'{self._kind}/<weight_bits>/<group_size>'", ["<weight_bits>", "<group_size>"]))
        if weight_bits not in self._bits:
            raise ValueError(self._bits_message(weight_bits, mode))
        if group_size < -1 or group_size == 0:
            raise ValueError("Invalid group_size in mode. Supported values are -1 (whole-tensor) or a positive "
                             f"integer, but got {group_size} from '{mode}'.")
        super().__init__(mode=self._kind, source_name=source_name)
        self._name = f"{mode}_from_{self._source_name}"
        self.mode = self._kind
        self.weight_bits = weight_bits
        self.group_size = group_size

    def get_config(self):
        return {**super().get_config(), "mode": f"{self._kind}/{self.weight_bits}/{self.group_size}"}

    def __eq__(self, other):
        return super().__eq__(other) and (self.weight_bits, self.group_size) == (other.weight_bits, other.group_size)

    def __hash__(self):
        return super().__hash__()


class GPTQDTypePolicy(_BitsAndGroupPolicy):
    """GPTQ's policy (``keras.dtype_policies.GPTQDTypePolicy``), mode
    ``"gptq/<weight_bits>/<group_size>"`` (bits 2, 3, 4 or 8). It parses
    and serializes; minikeras's layers do not run GPTQ (README)."""

    _kind = "gptq"
    _bits = (2, 3, 4, 8)

    def _bits_message(self, bits, mode):
        return f"Invalid weight_bits in mode. Supported values are 2, 3, 4, and 8, but got {bits} from '{mode}'."


class AWQDTypePolicy(_BitsAndGroupPolicy):
    """AWQ's policy (``keras.dtype_policies.AWQDTypePolicy``), mode
    ``"awq/4/<group_size>"``. It parses and serializes; minikeras's layers
    do not run AWQ (README)."""

    _kind = "awq"
    _bits = (4,)

    def _bits_message(self, bits, mode):
        return f"Invalid weight_bits in mode. AWQ only supports 4-bit quantization, but got {bits} from '{mode}'."


def quantized_policy_from_name(name):
    """The quantized policy a name such as ``"int8_from_float32"`` describes.

    Raises:
        ValueError: a name that is not ``"<mode>_from_<source>"`` (Keras's message).
    """
    if not isinstance(name, str):
        raise TypeError(f"`policy` must be a string. Received: policy={name}")
    if not name.startswith(QUANTIZATION_MODES):
        raise ValueError("`policy` is incompatible with the current supported quantization.")
    parts = name.split("_from_")
    if len(parts) != 2:
        raise ValueError("Cannot convert `policy` into a valid pair (`mode`, `source_name`) to instantiate "
                         f"`QuantizedDTypePolicy`. Received: policy={name}")
    mode, source_name = parts
    if name.startswith("float8"):
        return QuantizedFloat8DTypePolicy(mode, source_name)
    if name.startswith("int4") and "/" in mode:
        return Int4DTypePolicy(mode, source_name)
    if name.startswith("gptq"):
        return GPTQDTypePolicy(mode, source_name)
    if name.startswith("awq"):
        return AWQDTypePolicy(mode, source_name)
    return QuantizedDTypePolicy(mode, source_name)
