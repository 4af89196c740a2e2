"""``returnUrl`` read as the buyer's browser reads it: the WHATWG URL standard.

The sandbox checks a ``returnUrl`` when a session is made and sends the buyer to it (a
303) when the session ends. Both must see the same host, or a URL that one parser
reads as the merchant's sends the buyer somewhere else:
``http://shop.example\\@evil.example/back`` was accepted as ``shop.example`` and then
sent as ``http://shop.example%5C@evil.example/back``, which a browser reads as user
``shop.example%5C`` at host ``evil.example``. So both go through one parser, the
browser's (Ada, the WHATWG URL parser Node uses), and what a reader could take two
ways is refused outright (`check_return_url`):

- a backslash anywhere: a browser reads it as ``/`` in the address's first part, other
  parsers as a character of the host or user name;
- user info (``user:password@``): the part that made the host ambiguous, and never
  needed to send a buyer back.

The redirect (`with_params`) is the parsed URL's own serialisation (ASCII: a non-ASCII
host in its IDNA form, the rest percent-encoded as the standard says), its query kept
as the merchant wrote it with the outcome appended, and its fragment kept.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import urlencode

__all__ = ["check_return_url", "with_params"]

#: An ``@`` before the address's first ``/``, ``?`` or ``#``: user info, even empty.
_USER_INFO = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:/*[^/?#]*@")


def check_return_url(value: str) -> str:
    """``value`` if a browser reads it as one plain http(s) address; else `ValueError`.

    Raises:
        ValueError: with a message naming what is wrong.
    """
    from ada_url import URL  # with the first session: the sandbox's start does not need it

    if "\\" in value:
        raise ValueError("must not contain a backslash (a browser reads it as '/')")
    try:
        url = URL(value)
    except ValueError:
        raise ValueError("not a valid URL") from None
    if url.protocol not in ("http:", "https:"):
        raise ValueError("must be an http or https URL")
    if url.username or url.password or _USER_INFO.match(value):
        raise ValueError("must not carry user info (user:password@)")
    if not url.hostname:
        raise ValueError("URL has no host")
    return value


def with_params(return_url: str, params: Mapping[str, str | None]) -> str:
    """``return_url`` as a browser reads it, ``params`` appended to its query.

    The query is kept as written (``?@shop.example/`` stays so) and the fragment too;
    parameters that are ``None`` are left out.
    """
    from ada_url import URL

    url = URL(return_url)
    added = urlencode([(key, value) for key, value in params.items() if value is not None])
    if added:
        query = url.search.removeprefix("?")
        url.search = f"{query}&{added}" if query and not query.endswith("&") else query + added
    return str(url.href)
