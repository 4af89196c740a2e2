"""Swagger UI at ``/docs``, which signs the requests it sends.

Modules: `routes` (the page, Swagger UI's OAuth2 return page, and the signing script).
The script, ``static/signing.js``, is served from the sandbox as a file (the page's
Content-Security-Policy allows no inline script but Swagger UI's own start, by hash).
Swagger UI's assets come from the fastapi-offline package, so nothing loads from
another host.
"""
