"""The one request parser: JSON, refused with a 400 that says why when it is not good JSON."""

import json

from django.conf import settings
from rest_framework import parsers
from rest_framework.exceptions import ParseError, UnsupportedMediaType

from fulcrum.limits import PayloadTooLarge, body_limit


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, bounded: at most the body limit is read (RequestLimitsMiddleware
    refuses a longer announced body before this runs), the text must decode in its charset
    and be valid Unicode (no lone surrogates, which no answer could carry back), NaN and
    Infinity are refused, and nesting too deep for Python's parser is a 400, not a crash."""

    def parse(self, stream, media_type=None, parser_context=None):
        parser_context = parser_context or {}
        encoding = parser_context.get("encoding") or settings.DEFAULT_CHARSET
        request = parser_context.get("request")
        limit = body_limit(request.path if request is not None else "")
        raw = stream.read(limit + 1)
        if len(raw) > limit:
            raise PayloadTooLarge(limit)
        try:
            data = strict_json(raw.decode(encoding))
        except LookupError:  # Django takes any codec's name, "rot13" and "base64" too
            raise UnsupportedMediaType(media_type, f"Unsupported charset {encoding!r}: send UTF-8 JSON.") from None
        except UnicodeDecodeError as exc:
            raise ParseError(f"JSON parse error - the body is not {encoding} text: {exc.reason}.") from None
        except UnicodeEncodeError:
            raise ParseError("JSON parse error - a string holds a lone surrogate: not valid Unicode.") from None
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply.") from None
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        return data


def strict_json(text):
    """``text`` as JSON, refusing what PostgreSQL and our answers cannot carry: NaN and
    Infinity, lone surrogates. Raises ValueError (UnicodeEncodeError for a surrogate) or
    RecursionError."""
    data = json.loads(text, parse_constant=_refuse_constant)
    json.dumps(data, ensure_ascii=False).encode()
    return data


def _refuse_constant(name):
    raise ValueError(f"{name} is not a JSON value")
