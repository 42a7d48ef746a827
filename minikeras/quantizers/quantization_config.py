"""Quantization configs (Keras 3's ``QuantizationConfig`` family): which
quantizers ``quantize(...)`` uses for the weights and for the inputs.

``model.quantize("int8")`` is ``model.quantize(config=Int8QuantizationConfig())``:
the kernel quantized per output channel by absolute maximum, the inputs
per row at every call. A config with ``activation_quantizer=None`` makes
the layer weight-only (float inputs meet the dequantized kernel). A layer
keeps its config and saves it in its own config.
"""
from minikeras.dtype_policies.quantized import QUANTIZATION_MODES

__all__ = ["QuantizationConfig", "Int8QuantizationConfig", "Int4QuantizationConfig", "Float8QuantizationConfig",
           "validate_and_resolve_config"]


def _serialize(obj):
    from minikeras.quantizers import serialize

    return serialize(obj)


def _deserialize(config):
    from minikeras.quantizers import deserialize

    return None if config is None else deserialize(config)


class QuantizationConfig:
    """Base class of quantization configs (``keras.quantizers.QuantizationConfig``).

    Args:
        weight_quantizer: the quantizer of the weights (None: the layer's default).
        activation_quantizer: the quantizer of the inputs (None: weight-only).
    """

    def __init__(self, weight_quantizer=None, activation_quantizer=None):
        self.weight_quantizer = weight_quantizer
        self.activation_quantizer = activation_quantizer

    @property
    def mode(self):
        """The quantization mode this config is for ("int8", "int4", "float8")."""
        raise NotImplementedError("Subclasses must implement this property. Do not instantiate QuantizationConfig "
                                  "directly.")

    def get_config(self):
        return {"weight_quantizer": _serialize(self.weight_quantizer),
                "activation_quantizer": _serialize(self.activation_quantizer)}

    @classmethod
    def from_config(cls, config):
        return cls(weight_quantizer=_deserialize(config.get("weight_quantizer")),
                   activation_quantizer=_deserialize(config.get("activation_quantizer")))

    @staticmethod
    def weight_quantizer_or_default(config, default):
        """``config``'s weight quantizer, else ``default``."""
        if config is not None and config.weight_quantizer is not None:
            return config.weight_quantizer
        return default

    @staticmethod
    def activation_quantizer_or_default(config, default):
        """``config``'s activation quantizer (None included), else ``default`` when there is no config."""
        return config.activation_quantizer if config is not None else default


class Int8QuantizationConfig(QuantizationConfig):
    """int8 (``keras.quantizers.Int8QuantizationConfig``).

    Args:
        weight_quantizer: a quantizer with ``output_dtype="int8"`` (default:
            per output channel, absolute maximum).
        activation_quantizer: ``"default"`` (``AbsMaxQuantizer()``, per row),
            a quantizer, or None for weight-only int8.

    Raises:
        ValueError: a weight quantizer whose output is not int8.
    """

    def __init__(self, weight_quantizer=None, activation_quantizer="default"):
        if isinstance(activation_quantizer, str) and activation_quantizer == "default":
            from minikeras.quantizers.quantizers import AbsMaxQuantizer

            activation_quantizer = AbsMaxQuantizer()
        super().__init__(weight_quantizer, activation_quantizer)
        if weight_quantizer is not None and weight_quantizer.output_dtype != "int8":
            raise ValueError("Int8QuantizationConfig requires a weight_quantizer with output_dtype='int8'. "
                             f"Received: output_dtype={weight_quantizer.output_dtype}")

    @property
    def mode(self):
        return "int8"


class Int4QuantizationConfig(QuantizationConfig):
    """int4 (``keras.quantizers.Int4QuantizationConfig``): weight-only by default.

    Args:
        weight_quantizer: a quantizer with ``value_range=(-8, 7)`` and int8
            output (per-channel only).
        activation_quantizer: ``"default"`` (None: weight-only), or a quantizer.
        block_size: rows per group for sub-channel quantization (default
            128, with zero points), or None / -1 for one scale per output channel.

    Raises:
        ValueError: a bad ``block_size``, custom quantizers with sub-channel
            groups, or a weight quantizer of another range or dtype.
    """

    def __init__(self, weight_quantizer=None, activation_quantizer="default", block_size=128):
        if isinstance(activation_quantizer, str) and activation_quantizer == "default":
            activation_quantizer = None
        super().__init__(weight_quantizer, activation_quantizer)
        if block_size is not None and block_size != -1 and (isinstance(block_size, bool) or block_size <= 0):
            raise ValueError(f"block_size must be None, -1, or a positive integer. Received: block_size={block_size}")
        self.block_size = block_size
        if block_size is not None and block_size > 0 and (weight_quantizer is not None
                                                          or activation_quantizer is not None):
            raise ValueError("Int4 sub-channel quantization (block_size > 0) does not support custom quantizers. "
                             "Either set block_size to None or -1 for per-channel quantization, or remove the custom "
                             f"quantizer arguments. Received: block_size={block_size}")
        if weight_quantizer is not None:
            if tuple(weight_quantizer.value_range) != (-8, 7):
                raise ValueError("Int4QuantizationConfig requires a weight_quantizer with value_range=(-8, 7). "
                                 f"Received: value_range={weight_quantizer.value_range}")
            if weight_quantizer.output_dtype != "int8":
                raise ValueError("Int4QuantizationConfig requires a weight_quantizer with output_dtype='int8'. "
                                 f"Received: output_dtype={weight_quantizer.output_dtype}")

    @property
    def mode(self):
        return "int4"

    def get_config(self):
        return {**super().get_config(), "block_size": self.block_size}

    @classmethod
    def from_config(cls, config):
        return cls(weight_quantizer=_deserialize(config.get("weight_quantizer")),
                   activation_quantizer=_deserialize(config.get("activation_quantizer")),
                   block_size=config.get("block_size", None))


class Float8QuantizationConfig(QuantizationConfig):
    """float8 training (``keras.quantizers.Float8QuantizationConfig``): it
    takes no quantizers; it only selects the mode."""

    def __init__(self):
        super().__init__(None, None)

    @property
    def mode(self):
        return "float8"

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls()


def _check_mode(mode):
    if mode is not None and mode not in QUANTIZATION_MODES:
        raise ValueError(f"Invalid quantization mode. Expected one of {QUANTIZATION_MODES}. Received: mode={mode}")


def validate_and_resolve_config(mode, config):
    """The config ``quantize(mode, config)`` means (Keras's rules): a string
    config is a mode; a mode alone gets its default config; a config alone
    gives its mode.

    Raises:
        ValueError: an unknown mode, neither mode nor config, a config that
            is not a QuantizationConfig, a mode that contradicts the config,
            or "gptq"/"awq" (which need their calibration configs).
    """
    if isinstance(config, str):
        mode, config = config, None
    _check_mode(mode)
    if config is None:
        defaults = {"int8": Int8QuantizationConfig, "int4": Int4QuantizationConfig,
                    "float8": Float8QuantizationConfig}
        if mode in defaults:
            config = defaults[mode]()
        elif mode in ("gptq", "awq"):
            raise ValueError(f"For {mode.upper()}, you must pass a `{mode.upper()}Config` object in the `config` "
                             "argument.")
        else:
            raise ValueError("You must provide either `mode` or `config` to `quantize`.")
    elif not isinstance(config, QuantizationConfig):
        raise ValueError("Argument `config` must be an instance of `QuantizationConfig`. "
                         f"Received: config={config} (of type {type(config)})")
    if mode is not None and config.mode != mode:
        raise ValueError(f"Contradictory arguments: mode='{mode}' but config.mode='{config.mode}'")
    _check_mode(config.mode)
    return config
