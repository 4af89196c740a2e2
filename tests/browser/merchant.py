"""The merchant's return page that the buyer's browser lands on, served on 127.0.0.1;
and `SHOP`, the merchant's name that is not a loopback one."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler
from typing import Any

__all__ = ["SHOP", "MerchantPage"]

#: A shop's name that the browser tests' Chromium resolves to 127.0.0.1: a page on this
#: machine whose origin is not a loopback name.
SHOP = "shop.example"


class MerchantPage(BaseHTTPRequestHandler):
    """Answers every GET with a small page saying the buyer is back at the merchant."""

    def do_GET(self) -> None:
        body = b"<!doctype html><title>Merchant</title><h1>Back at the merchant</h1>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass
