"""Regular expressions as the daemons compile them: PCRE2's libpcre2-8, which HAProxy and
keepalived both link on Debian, called through ctypes.

Python's ``re`` is not the daemons' engine: it accepts ``(?u)abc`` and ``a{1,100000}``, which
PCRE2 refuses ("unrecognized character after (? or (?-", "number too big in {} quantifier"),
so a pattern the API took would block every later apply. HAProxy compiles the patterns it
only matches (acls, ``http-check expect rstring``) with ``PCRE2_NO_AUTO_CAPTURE``: there
``(a)`` captures nothing and ``(a)\\1`` refers to nothing. keepalived compiles with no options
(multiline is no matter of syntax). A pattern must compile both ways.
"""

import ctypes
import ctypes.util
import functools

_ERROR_BUFFER = 256
_NO_AUTO_CAPTURE = 0x00002000  # PCRE2_NO_AUTO_CAPTURE


@functools.cache
def _pcre2():
    lib = ctypes.CDLL(ctypes.util.find_library("pcre2-8") or "libpcre2-8.so.0")
    lib.pcre2_compile_8.restype = ctypes.c_void_p
    lib.pcre2_compile_8.argtypes = [
        ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint32,
        ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_size_t), ctypes.c_void_p,
    ]  # fmt: skip
    lib.pcre2_code_free_8.argtypes = [ctypes.c_void_p]
    lib.pcre2_get_error_message_8.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
    return lib


def compile_error(pattern):
    """Why PCRE2 refuses ``pattern`` as HAProxy or keepalived compiles it, in its words ("" when
    both compile it)."""
    return _compile_error(pattern, _NO_AUTO_CAPTURE) or _compile_error(pattern, 0)


def _compile_error(pattern, options):
    lib = _pcre2()
    code, offset = ctypes.c_int(), ctypes.c_size_t()
    data = pattern.encode()
    compiled = lib.pcre2_compile_8(data, len(data), options, ctypes.byref(code), ctypes.byref(offset), None)
    if compiled:
        lib.pcre2_code_free_8(compiled)
        return ""
    message = ctypes.create_string_buffer(_ERROR_BUFFER)
    lib.pcre2_get_error_message_8(code, message, _ERROR_BUFFER)
    return f"{message.value.decode(errors='replace')} (at character {offset.value})"


# How a pattern matches a character literally without a backslash: in a class of its own, but
# for '^', which no class holds alone ("[^]" opens a negated class that never ends, and PCRE2
# refuses the pattern): the one character of "[]^]" that is not ']'.
_LITERAL = {c: f"[{c}]" for c in ".[]()*+?|"} | {"^": "(?=[]^])[^]]"}


def literal(text):
    """A pattern matching ``text`` literally, without backslashes (keepalived's parser eats them)."""
    return "".join(_LITERAL.get(c, c) for c in text)
