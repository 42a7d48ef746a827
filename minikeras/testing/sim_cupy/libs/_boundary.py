"""The ctypes boundary of a library double: each call checked as ctypes and
the C function would see it.

Each double holds the C prototypes of the functions it models
(``PROTOTYPES``: name -> (restype, argtypes), its reading of the vendor's
header, checked against the real headers by benchmarks/ctypes_audit.py).
A call through :func:`library` is refused, as on a card it would crash or
be misread, when:

- the function's ``restype`` (what ``minikeras.device.native.declare``
  sets; ctypes' default is a C ``int``) is not the prototype's: a pointer
  or a ``size_t`` returned through an ``int`` is truncated;
- the caller declared ``argtypes`` other than the prototype: a pointer
  where the C function takes an ``int``, 32 bits where it takes 64;
- the argument count differs from the prototype's;
- an argument is not what ctypes passes as the parameter's C type: with the
  function declared, what the argtype's ``from_param`` refuses; undeclared,
  ctypes passes a Python int as a 32-bit C ``int``, so an int for a pointer
  or a 64-bit parameter (its upper half would be garbage) and a float are
  refused;
- an integer does not fit its 32-bit parameter (ctypes truncates it
  silently).
"""
import ctypes
import functools
import types


def kind(c_type):
    """``(what, bytes)`` of a ctypes type: what is "pointer", "int" or "float"."""
    if c_type is None:
        return ("void", 0)
    if c_type in (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_wchar_p) or \
            issubclass(c_type, (ctypes._Pointer, ctypes._CFuncPtr)):
        return ("pointer", ctypes.sizeof(ctypes.c_void_p))
    if c_type in (ctypes.c_float, ctypes.c_double, ctypes.c_longdouble):
        return ("float", ctypes.sizeof(c_type))
    return ("int", ctypes.sizeof(c_type))


def _refuse(library_name, name, message):
    raise RuntimeError(f"Simulated {library_name}: {name} {message}: on a card this call would crash or be "
                       "misread (C prototype: benchmarks/ctypes_audit.py checks it against the header).")


def _check_argument(library_name, name, index, c_type, argument, declared):
    what, size = kind(c_type)
    if not isinstance(argument, int):
        value = getattr(argument, "value", None) if isinstance(argument, ctypes._SimpleCData) else None
    else:
        value = argument
        if not declared and (what != "int" or size != 4):
            _refuse(library_name, name, f"was given the Python int {argument} as argument {index} while undeclared "
                                        f"(ctypes passes a 32-bit int; the C parameter is a {size}-byte {what})")
    if declared or not isinstance(argument, int):
        if isinstance(argument, float) and not declared:
            _refuse(library_name, name, f"was given the Python float {argument} as argument {index} while undeclared")
        try:
            c_type.from_param(argument)
        except (TypeError, ValueError) as error:
            _refuse(library_name, name, f"argument {index} ({argument!r}) is not a {c_type.__name__} ({error})")
    if what == "int" and size == 4 and isinstance(value, int) and not -2**31 <= value < 2**31:
        _refuse(library_name, name, f"argument {index} is {value}, which its 32-bit C int parameter truncates")


def _boundary(library_name, name, function, prototype):
    restype, argtypes = prototype

    @functools.wraps(function)
    def call(*arguments):
        if kind(call.restype) != kind(restype):
            _refuse(library_name, name, f"returns {restype.__name__} in C, but its restype is "
                                        f"{getattr(call.restype, '__name__', call.restype)}")
        declared = call.argtypes
        if declared is not None and [kind(t) for t in declared] != [kind(t) for t in argtypes]:
            _refuse(library_name, name, f"was declared with argtypes {declared}, not its C prototype's "
                                        f"{list(argtypes)}")
        if len(arguments) != len(argtypes):
            _refuse(library_name, name, f"was given {len(arguments)} arguments; its C prototype takes "
                                        f"{len(argtypes)}")
        for index, (c_type, argument) in enumerate(zip(argtypes, arguments)):
            _check_argument(library_name, name, index, c_type, argument, declared is not None)
        return function(*arguments)

    call.argtypes, call.restype = None, ctypes.c_int  # ctypes' defaults
    return call


def library(library_name, functions, prototypes):
    """A namespace of ``functions`` ({name: Python function}), each behind
    the boundary checks of its prototype in ``prototypes``."""
    missing = set(functions) - set(prototypes)
    if missing:
        raise RuntimeError(f"Simulated {library_name}: no C prototype for {sorted(missing)}.")
    return types.SimpleNamespace(**{name: _boundary(library_name, name, function, prototypes[name])
                                    for name, function in functions.items()})
