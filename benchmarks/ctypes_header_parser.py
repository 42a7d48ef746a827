"""A small C header reader for benchmarks/ctypes_audit.py: enums (values,
implicit increments, references to earlier enumerators, deprecation
marks, each enumerator's doc comment), integer ``#define``s, typedefs,
function prototypes, and cuDNN's documented backend attributes
("- CUDNN_ATTR_X (CUDNN_TYPE_Y, N elements)" in cudnn_graph.h's comments).

Enough C for the CUDA and cuDNN headers, not a C compiler: no macro
expansion beyond dropping API decoration (``CUDNNWINAPI``, ``__host__``...),
the first prototype of a name wins (cublas_api.h's C++ inline wrappers come
later).
"""
import glob
import os
import re

INFINITE = float("inf")
# Attributes whose comment names them other than their enumerator (cudnn_graph.h, cuDNN 9.28).
DOCUMENTED_AS = {"CUDNN_ATTR_CONVOLUTION_MODE": "CUDNN_ATTR_CONVOLUTION_CONV_MODE"}
_BUILTIN = {  # C type words -> (what, bytes)
    ("void",): ("void", 0), ("char",): ("int", 1), ("bool",): ("int", 1), ("_Bool",): ("int", 1),
    ("short",): ("int", 2), ("int",): ("int", 4), ("unsigned",): ("int", 4), ("long",): ("int", 8),
    ("long", "long"): ("int", 8), ("float",): ("float", 4), ("double",): ("float", 8),
    ("size_t",): ("int", 8), ("int8_t",): ("int", 1), ("uint8_t",): ("int", 1), ("int16_t",): ("int", 2),
    ("uint16_t",): ("int", 2), ("int32_t",): ("int", 4), ("uint32_t",): ("int", 4), ("int64_t",): ("int", 8),
    ("uint64_t",): ("int", 8), ("cuuint32_t",): ("int", 4), ("cuuint64_t",): ("int", 8),
}
_QUALIFIERS = {"const", "volatile", "restrict", "__restrict__", "struct", "enum", "signed", "extern", "static",
               "inline", "typedef"}
_DECORATION = re.compile(r"^(__\w+__|\w*API|CUDNNWINAPI|CUBLASWINAPI|CUDNN_DEPRECATED\w*|CUDART_CB|CUDA_CB)$")
_NUMBER = re.compile(r"^[0-9a-fA-FxX+\-*/<>|&~() ]+$")


class Headers:
    """What a set of headers declares (module docstring)."""

    def __init__(self):
        self.enums = {}  # enumerator -> value
        self.enum_types = {}  # enum type name -> {enumerator: value}
        self.docs = {}  # enumerator -> its doc comment (leading and trailing)
        self.deprecated = set()  # enumerators marked deprecated
        self.defines = {}  # macro -> integer value
        self.typedefs = {}  # name -> (words, stars)
        self.prototypes = {}  # function -> ((return words, stars), [(words, stars), ...])
        self.attributes = {}  # CUDNN_ATTR_* -> (CUDNN_TYPE_* names, (least, most) elements)
        self.structs = {}  # typedef name -> [(words, stars, array length), ...]
        self.files = []

    # ------------------------------------------------------------ types
    def kind(self, words, stars=0, depth=0):
        """``(what, bytes)`` of a C type: what is "pointer", "int", "float" or "void"."""
        if stars:
            return ("pointer", 8)
        words = [w for w in words if w not in _QUALIFIERS and w != "unsigned" and not _DECORATION.match(w)]
        if len(words) > 1 and set(words) <= {"long", "int", "short", "char"}:
            words = [w for w in words if w != "int"]
        words = tuple(words) or ("int",)  # plain ``unsigned``
        if words in _BUILTIN:
            return _BUILTIN[words]
        name = words[-1] if words else ""
        if name in self.enum_types:
            return ("int", 4)
        if name in self.typedefs and depth < 8:
            return self.kind(*self.typedefs[name], depth=depth + 1)
        return ("unknown " + " ".join(words), None)

    def pointee(self, words, stars):
        """The kind of what a one-star pointer points to, or None."""
        return self.kind(words, stars - 1) if stars == 1 else None


def _blank(text, spans):
    """``text`` with each span replaced by spaces (positions kept)."""
    chars = list(text)
    for start, end in spans:
        for i in range(start, end):
            if chars[i] != "\n":
                chars[i] = " "
    return "".join(chars)


def _comments(text):
    return [(m.start(), m.end(), m.group(0)) for m in re.finditer(r"/\*.*?\*/|//[^\n]*", text, re.S)]


def _evaluate(expression, known):
    expression = re.sub(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]+\b", r"\1", expression.strip())
    expression = re.sub(r"\b[A-Za-z_]\w*\b", lambda m: str(known[m.group(0)]) if m.group(0) in known
                        else m.group(0), expression)
    expression = re.sub(r"\(\s*(?:enum\s+|struct\s+)?[A-Za-z_]\w*\s*\**\s*\)", "", expression)  # casts
    if not expression or not _NUMBER.match(expression):
        return None
    try:
        return int(eval(expression.replace("/", "//"), {"__builtins__": {}}, {}))  # noqa: S307 (digits only)
    except Exception:  # noqa: BLE001
        return None


def _split_top(body):
    parts, depth, start = [], 0, 0
    for index, char in enumerate(body):
        depth += char in "([{"
        depth -= char in ")]}"
        if char == "," and depth == 0:
            parts.append((start, index))
            start = index + 1
    parts.append((start, len(body)))
    return parts


def _enum(headers, raw_body, clean_body, names):
    value, members = -1, {}
    pending_trailing = None
    for start, end in _split_top(clean_body):
        segment = clean_body[start:end].strip()
        docs = [c for s, e, c in _comments(raw_body[start:end])]
        leading = [c for c in docs if not c.startswith("/**<")]
        trailing = [c for c in docs if c.startswith("/**<")]
        if pending_trailing is not None and trailing:
            headers.docs[pending_trailing] = headers.docs.get(pending_trailing, "") + " " + " ".join(trailing)
        if not segment:
            continue
        match = re.match(r"([A-Za-z_]\w*)\s*((?:\s*\w+|\s*__attribute__\s*\(\(.*?\)\)|\s*\[\[.*?\]\])*?)\s*(?:=(.*))?$",
                         segment, re.S)
        if not match:
            continue
        name, decoration, expression = match.group(1), match.group(2) or "", match.group(3)
        if "DEPRECATED" in decoration or "deprecated" in decoration:
            headers.deprecated.add(name)
        if expression is None:
            value += 1
        else:
            found = _evaluate(expression, {**headers.enums, **members, **headers.defines})
            if found is None:
                continue
            value = found
        members[name] = value
        headers.docs[name] = " ".join(leading)
        pending_trailing = name
    headers.enums.update(members)
    for name in names:
        if name:
            headers.enum_types.setdefault(name, {}).update(members)


def _attribute_docs(headers, raw):
    for match in re.finditer(r"\*\s+-\s+(CUDNN_ATTR_\w+)\s+\(([^\n]*)\)", raw):
        name, inner = DOCUMENTED_AS.get(match.group(1), match.group(1)), match.group(2)
        types = tuple(sorted(set(re.findall(r"CUDNN_TYPE_\w+", inner))))
        if not types or name in headers.attributes:
            continue
        count = inner.rsplit(",", 1)[-1] if "," in inner else ""
        limit = headers.defines.get("CUDNN_DIM_MAX", 8)  # the comments' CUDNN_MAX_DIMS is CUDNN_DIM_MAX
        if m := re.search(r"(\d+)\s*\.\.\s*(\w+)", count):
            counts = (int(m.group(1)), limit if not m.group(2).isdigit() else int(m.group(2)))
        elif "at most" in count:
            counts = (1, limit)
        elif m := re.search(r"(\d+)\+", count):
            counts = (int(m.group(1)), INFINITE)
        elif m := re.search(r"(\d+)\s*element", count):
            counts = (int(m.group(1)), int(m.group(1)))
        else:
            counts = None
        headers.attributes[name] = (types, counts)


def _words(declaration):
    tokens = re.findall(r"[A-Za-z_]\w*|\*", declaration)
    stars = tokens.count("*")
    words = [t for t in tokens if t != "*" and t not in _QUALIFIERS and not _DECORATION.match(t)]
    return words, stars


def _parameter(text):
    words, stars = _words(text)
    if words == ["void"] and not stars:
        return None
    builtin_words = {w for key in _BUILTIN for w in key} | {"unsigned"}
    if len(words) >= 2 and words[-1] not in builtin_words:
        words = words[:-1]  # the parameter's name
    return tuple(words), stars


def parse_file(headers, path):
    raw = open(path, encoding="utf-8", errors="replace").read()
    headers.files.append(path)
    comments = _comments(raw)
    clean = _blank(raw, [(s, e) for s, e, _ in comments])
    for match in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+([^\n]+)$", clean, re.M):
        value = _evaluate(match.group(2), headers.defines)
        if value is not None:
            headers.defines.setdefault(match.group(1), value)
    code = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", lambda m: " " * len(m.group(0)), clean, flags=re.M)
    for match in re.finditer(r"\benum\b([^{};()]*)\{([^{}]*)\}\s*(\w*)\s*;", code):
        tag = (match.group(1).split() or [None])[-1]
        _enum(headers, raw[match.start(2):match.end(2)], match.group(2), [tag, match.group(3)])
    for match in re.finditer(r"\btypedef\s+struct\s*\w*\s*\{([^{}]*)\}\s*(\w+)[^;]*;", code):
        fields = []
        for field in match.group(1).split(";"):
            length = re.search(r"\[(\d+)\]", field)
            words, stars = _words(re.sub(r"\[\d+\]", "", field))
            if words:
                fields.append((tuple(words[:-1]), stars, int(length.group(1)) if length else 1))
        headers.structs.setdefault(match.group(2), fields)
    for match in re.finditer(r"\btypedef\s+(?:__\w+__\s+)*enum\s+(\w+)\s+(\w+)\s*;", code):
        headers.enum_types.setdefault(match.group(2), {}).update(headers.enum_types.get(match.group(1), {}))
    for match in re.finditer(r"\btypedef\s+([^;{}()]*?)\s*\b(\w+)\s*;", code):
        words, stars = _words(match.group(1))
        if match.group(2) not in headers.enum_types and words:
            headers.typedefs.setdefault(match.group(2), (tuple(words), stars))
    prototype = r"(?:(?<=[;{}])|^)\s*([^;{}()=]*?)\b((?:cudnn|cublas|cuda|cu)\w+)\s*\(([^()]*)\)\s*;"
    for match in re.finditer(prototype, code):
        head, name, parameters = match.groups()
        if name in headers.prototypes or "return" in head.split() or not head.strip():
            continue
        words, stars = _words(head)
        if not words:
            continue
        listed = [_parameter(p) for p in parameters.split(",")] if parameters.strip() else []
        headers.prototypes[name] = ((tuple(words), stars), [p for p in listed if p is not None])
    _attribute_docs(headers, raw)


def read(directories):
    """The Headers of every ``*.h`` in ``directories`` (searched in order)."""
    headers = Headers()
    for directory in directories:
        for path in sorted(glob.glob(os.path.join(directory, "*.h"))):
            parse_file(headers, path)
    return headers
